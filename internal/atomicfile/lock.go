package atomicfile

import (
	"errors"
	"os"

	"github.com/cryptvol/cryptvol/internal/filelock"
)

// lockFile marks f as in use for as long as this process has it open: an
// exclusive advisory lock, which the kernel drops when the process dies.
// Where the filesystem has no locks, the name's PID is all there is.
func lockFile(f *os.File) (func(), error) {
	unlock, err := filelock.TryLock(f, true, filelock.Temporary)
	if errors.Is(err, filelock.ErrNoLocks) {
		return func() {}, nil
	}
	return unlock, err
}

// lockHeld reports whether another open file holds f's lock.
func lockHeld(f *os.File) bool { return filelock.Held(f, filelock.Temporary) }
