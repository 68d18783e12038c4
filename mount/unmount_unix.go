//go:build linux || darwin

package mount

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// unmountError maps what umount(2) returned for dir onto ErrBusy and
// ErrNotMounted where it means that.
func unmountError(dir string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EBUSY):
		return fmt.Errorf("unmounting %s: %w", dir, ErrBusy)
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOENT):
		return fmt.Errorf("%s: %w", dir, ErrNotMounted)
	}
	return fmt.Errorf("unmounting %s: %w", dir, err)
}
