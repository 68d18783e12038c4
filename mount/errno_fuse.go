//go:build linux || darwin

package mount

import (
	"errors"
	"syscall"

	"github.com/cryptvol/cryptvol/internal/fserrno"
)

// posix are this platform's numbers for internal/fserrno's table, which
// decides which error of the filesystems and the volume layer is which
// errno (the cgofuse adapter, mount/cgofs, answers from the same table).
var posix = fserrno.Numbers[syscall.Errno]{
	NOENT: syscall.ENOENT, EXIST: syscall.EEXIST, NOTEMPTY: syscall.ENOTEMPTY,
	ISDIR: syscall.EISDIR, NOTDIR: syscall.ENOTDIR, INVAL: syscall.EINVAL,
	NOSPC: syscall.ENOSPC, FBIG: syscall.EFBIG, ROFS: syscall.EROFS,
	PERM: syscall.EPERM, ACCES: syscall.EACCES,
}

// errno maps an error onto the errno a POSIX filesystem returns for the
// same condition: through the table, else an errno already in the chain,
// else an I/O error.
func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if e, ok := fserrno.Of(err, &posix); ok {
		return e
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	return syscall.EIO
}
