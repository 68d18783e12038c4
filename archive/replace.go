package archive

import (
	"fmt"
	"os"
	"runtime"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

// replaceByReopening says whether Compact must close the archive's files
// before renaming the compacted one over it. Windows renames neither a
// file that is open nor over one ("Sharing violation"); elsewhere the
// rename happens with both open, and readers of the old file go on
// reading it.
var replaceByReopening = runtime.GOOS == "windows"

// reopenReplace is Compact's rename where the files must be closed first:
// it releases tmp's lock, closes every handle on the archive (readers
// still using one get an error), closes tmp and renames it over the
// archive, and opens and locks whichever file is then at the path -- the
// new one, or the old one again if the rename failed. a.mu must be held.
// The returned error is the rename's; if the file cannot be opened again
// the archive is marked broken.
func (a *Archive) reopenReplace(tmp *atomicfile.File, unlockTmp func()) error {
	unlockTmp()
	a.closeFiles()
	renameErr := tmp.CloseAndRename()
	if tmp.Renamed() {
		renameErr = nil // only the directory sync failed: the data is there
	}
	f, err := os.OpenFile(a.path, os.O_RDWR, 0)
	if err == nil {
		if a.unlock, err = lockFile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		a.f, a.unlock = nil, nil
		a.broken = fmt.Errorf("%w: compacting, the archive could not be opened again: %v", ErrClosed, err)
		if renameErr != nil {
			return renameErr
		}
		return a.broken
	}
	a.f = f
	return renameErr
}
