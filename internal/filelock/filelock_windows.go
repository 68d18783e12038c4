//go:build windows

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

func tryLock(f *os.File, exclusive bool, b Byte) (func(), error) {
	h := windows.Handle(f.Fd())
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := &windows.Overlapped{Offset: uint32(b), OffsetHigh: 0x7FFFFFFF}
	err := windows.LockFileEx(h, flags, 0, 1, 0, ol)
	switch {
	case err == nil:
		return func() {
			windows.UnlockFileEx(h, 0, 1, 0, &windows.Overlapped{Offset: uint32(b), OffsetHigh: 0x7FFFFFFF})
		}, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return nil, ErrBusy
	case errors.Is(err, windows.ERROR_NOT_SUPPORTED), errors.Is(err, windows.ERROR_INVALID_FUNCTION):
		return nil, ErrNoLocks
	}
	return nil, err
}
