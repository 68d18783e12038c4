package resize

import (
	"fmt"

	"github.com/cryptvol/cryptvol/volume"
)

// An external tool's result (resize2fs, ntfsresize) is copied into the
// container from the journal only once complete (record.go). A kill during
// that copy leaves a container whose filesystem is part old, part new: it
// opens, but some files are not whole until the copy is done again. So
// every open of the container finishes that copy first (volume.Recovery),
// not only the next `resize`; the record stays, with the copy marked done,
// for the next `resize` to finish the rest of the job (the header, the
// container's size).
func init() {
	volume.RegisterRecovery(volume.Recovery{Pending: journalPending, Finish: rollForward})
}

// journalPending reports whether path has an interrupted resize whose
// journal is complete and not yet (wholly) copied in: for a container
// without a record, one failed stat (loadRecord).
func journalPending(path string) bool {
	rec, err := loadRecord(path)
	return err == nil && rec != nil && rec.Journal
}

// rollForward copies the journal in, as the interrupted resize would have.
func rollForward(dev *volume.FileDevice, path string) (string, error) {
	rec, err := loadRecord(path) // again, now that dev is locked
	if err != nil || rec == nil || !rec.Journal {
		return "", err
	}
	if err := rec.copyIn(path, dev); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: an interrupted resize had its filesystem's new layout half copied in: copied in now; run the same `cryptvol resize` again to finish it", path), nil
}
