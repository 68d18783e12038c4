//go:build windows

package atomicfile

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockRange is one byte far beyond any real data (Windows locks are
// mandatory), and not the byte package archive locks, so that a compacted
// archive can hold both.
func lockRange() *windows.Overlapped {
	return &windows.Overlapped{Offset: 0xFFFFFFFD, OffsetHigh: 0x7FFFFFFF}
}

// lockFile marks f as in use for as long as this process has it open.
func lockFile(f *os.File) (func(), error) {
	h := windows.Handle(f.Fd())
	ol := lockRange()
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol); err != nil {
		return func() {}, nil // no locks here: the name's PID is all there is
	}
	return func() { windows.UnlockFileEx(h, 0, 1, 0, ol) }, nil
}

// lockHeld reports whether another open file holds f's lock.
func lockHeld(f *os.File) bool {
	h := windows.Handle(f.Fd())
	ol := lockRange()
	err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err == nil {
		windows.UnlockFileEx(h, 0, 1, 0, ol)
		return false
	}
	return errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}

func ignorableSyncError(error) bool { return true }
