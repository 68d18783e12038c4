//go:build windows

package archive

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockFile takes the writer lock: an exclusive LockFileEx on one byte far
// beyond any real data (Windows locks are mandatory, so locking the header
// would stop readers), released when the file closes.
func lockFile(f *os.File) (func(), error) {
	h := windows.Handle(f.Fd())
	ol := &windows.Overlapped{Offset: 0xFFFFFFFE, OffsetHigh: 0x7FFFFFFF}
	err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err != nil {
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return func() { windows.UnlockFileEx(h, 0, 1, 0, ol) }, nil
}
