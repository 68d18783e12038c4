package archive

import (
	"errors"
	"os"

	"github.com/cryptvol/cryptvol/internal/filelock"
)

// lockFile takes the writer lock: an exclusive advisory lock on the open
// file, released when it closes (also when the process dies). Another
// writer makes it fail with ErrLocked; where the filesystem has no locks,
// one writer at a time is the caller's duty.
func lockFile(f *os.File) (func(), error) {
	unlock, err := filelock.TryLock(f, true, filelock.Primary)
	switch {
	case errors.Is(err, filelock.ErrBusy):
		return nil, ErrLocked
	case errors.Is(err, filelock.ErrNoLocks):
		return func() {}, nil
	}
	return unlock, err
}
