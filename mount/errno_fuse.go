//go:build linux || darwin

package mount

import (
	"errors"
	iofs "io/fs"
	"syscall"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/volume"
)

// errno maps the filesystem layer's and the volume's errors onto the
// errno a POSIX filesystem returns for the same condition. Anything
// unrecognised is an I/O error.
func errno(err error) syscall.Errno {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, iofs.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, iofs.ErrExist):
		return syscall.EEXIST
	case errors.Is(err, filesystem.ErrNotEmpty):
		return syscall.ENOTEMPTY
	case errors.Is(err, filesystem.ErrIsDir):
		return syscall.EISDIR
	case errors.Is(err, filesystem.ErrNotDir):
		return syscall.ENOTDIR
	case errors.Is(err, filesystem.ErrInvalidName):
		return syscall.EINVAL
	case errors.Is(err, filesystem.ErrFileTooLarge): // before ErrNoSpace, which it wraps
		return syscall.EFBIG
	case errors.Is(err, filesystem.ErrNoSpace):
		return syscall.ENOSPC
	case errors.Is(err, filesystem.ErrReadOnly), errors.Is(err, volume.ErrReadOnly):
		return syscall.EROFS
	case errors.Is(err, volume.ErrProtected):
		// TrueCrypt's hidden-volume protection: refuse, loudly, and keep
		// refusing (the fat package stops writing after the first refusal).
		return syscall.EPERM
	case errors.Is(err, volume.ErrOutOfRange):
		return syscall.ENOSPC
	case errors.Is(err, iofs.ErrPermission):
		return syscall.EACCES
	case errors.Is(err, iofs.ErrInvalid):
		return syscall.EINVAL
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	return syscall.EIO
}
