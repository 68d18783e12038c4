//go:build unix

package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// ignorableSyncError reports whether syncing a directory failed only
// because the filesystem cannot do it.
func ignorableSyncError(err error) bool {
	return errors.Is(err, errors.ErrUnsupported) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP)
}
