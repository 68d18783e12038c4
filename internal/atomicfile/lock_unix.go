//go:build unix

package atomicfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile marks f as in use for as long as this process has it open: an
// exclusive flock, which the kernel drops when the process dies.
func lockFile(f *os.File) (func(), error) {
	fd := int(f.Fd())
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOLCK) {
			return func() {}, nil // a filesystem without locks: the name's PID is all there is
		}
		return nil, err
	}
	return func() { unix.Flock(fd, unix.LOCK_UN) }, nil
}

// lockHeld reports whether another open file holds f's lock.
func lockHeld(f *os.File) bool {
	fd := int(f.Fd())
	err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		unix.Flock(fd, unix.LOCK_UN)
		return false
	}
	return errors.Is(err, unix.EWOULDBLOCK)
}

func ignorableSyncError(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP)
}
