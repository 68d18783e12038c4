package volume

import (
	"errors"
	"os"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

// CreateFile makes a new container file at path through a temporary file
// in the same directory (internal/atomicfile): sized to size bytes,
// sparse, readable by its owner only (a file it replaces keeps its
// mode), and opened as a new device for build, which writes the headers
// and the data area. It is renamed into place only when build succeeds:
// a failure or an interrupt leaves nothing behind, and the file of a
// killed run is removed by the next one, which leftover (if not nil)
// hears about. A volume at path that this replaces must not be in use
// (an error wrapping ErrLocked): a mount or a put would go on writing to
// the old file, unseen.
func CreateFile(path string, size int64, leftover func(atomicfile.Leftover), build func(dev *FileDevice) error) error {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		old, err := OpenDevice(path, false)
		if errors.Is(err, ErrLocked) {
			return err
		}
		if err == nil {
			defer old.Close()
		}
	}
	tmp, err := atomicfile.Create(path, atomicfile.Options{Perm: 0o600, KeepMode: true, Leftover: leftover})
	if err != nil {
		return err
	}
	defer tmp.Discard()
	if err := tmp.Truncate(size); err != nil {
		return err
	}
	dev, err := OpenNewDevice(tmp.Path())
	if err != nil {
		return err
	}
	err = build(dev)
	if cerr := dev.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return tmp.Commit()
}
