//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package archive

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes the writer lock: an exclusive flock on the open file,
// released when it closes (also when the process dies).
func lockFile(f *os.File) (func(), error) {
	fd := int(f.Fd())
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
			return func() {}, nil // a filesystem without locks
		}
		return nil, err
	}
	return func() { unix.Flock(fd, unix.LOCK_UN) }, nil
}
