//go:build windows

package lock

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is the byte locked: far beyond any real data, because Windows
// locks are mandatory and a locked byte that is read or written would fail
// the holder's own I/O through its other handles.
const lockOffsetLow, lockOffsetHigh = 0xFFFFFFFE, 0x7FFFFFFF

// tryLock takes a LockFileEx lock on f without waiting.
func tryLock(f *os.File, exclusive bool) (func(), error) {
	h := windows.Handle(f.Fd())
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := &windows.Overlapped{Offset: lockOffsetLow, OffsetHigh: lockOffsetHigh}
	err := windows.LockFileEx(h, flags, 0, 1, 0, ol)
	switch {
	case err == nil:
		return func() {
			windows.UnlockFileEx(h, 0, 1, 0, &windows.Overlapped{Offset: lockOffsetLow, OffsetHigh: lockOffsetHigh})
		}, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return nil, errBusy
	case errors.Is(err, windows.ERROR_NOT_SUPPORTED), errors.Is(err, windows.ERROR_INVALID_FUNCTION):
		return nil, errNoLocks
	}
	return nil, err
}

// fileID names the file by volume serial number and file index, Windows'
// device and inode.
func fileID(f *os.File) (string, error) {
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &fi); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x-%x", fi.VolumeSerialNumber, uint64(fi.FileIndexHigh)<<32|uint64(fi.FileIndexLow)), nil
}

// processAlive reports whether pid runs.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		// Access denied means it exists.
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	const stillActive = 259
	return code == stillActive
}

// privateDir: the per-user temporary directory is private on Windows.
func privateDir(dir string) bool {
	fi, err := os.Lstat(dir)
	return err == nil && fi.IsDir()
}
