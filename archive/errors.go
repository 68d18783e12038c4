package archive

import (
	"errors"
	"fmt"
	"io/fs"
)

// Sentinel errors, tested with errors.Is. Errors returned by this package
// wrap them with detail (which member, which offset).
var (
	// ErrWrongKey: the password or key file does not unwrap the archive's
	// file key. A damaged header wrap looks the same and cannot be told
	// apart.
	ErrWrongKey = errors.New("wrong password or key file")
	// ErrNotArchive: the file does not start with the archive magic.
	ErrNotArchive = errors.New("not a cryptvol archive")
	// ErrUnsupported: a format version or algorithm this build does not know.
	ErrUnsupported = errors.New("unsupported archive")
	// ErrDamaged: authentication or a structural check failed after the key
	// was accepted: a record, an index segment, a footer or the header MAC.
	ErrDamaged = errors.New("damaged archive")
	// ErrExists: a member of that name exists (and Replace was not asked
	// for), or Create found a file at the path.
	ErrExists = fs.ErrExist
	// ErrNotExist: no member of that name.
	ErrNotExist = fs.ErrNotExist
	// ErrInvalidName: a member name that is not a clean relative
	// slash-separated path (see ValidName).
	ErrInvalidName = errors.New("invalid member name")
	// ErrReadOnly: a change to an archive opened read-only.
	ErrReadOnly = errors.New("archive opened read-only")
	// ErrLocked: another process holds the archive open for writing.
	ErrLocked = errors.New("archive is being written by another process")
	// ErrClosed: use of a closed archive, or of one whose last commit
	// failed half-way (its on-disk state is then the old or the new one;
	// open it again to see which).
	ErrClosed = errors.New("archive closed")
	// ErrInvalidOption: Create refused one of its options (the Argon2
	// costs). The error is an *OptionError carrying the refusal's own
	// message. Package archive has its own sentinel, as it has its own
	// ErrDamaged: it does not import package volume.
	ErrInvalidOption = errors.New("invalid option")
)

// OptionError is a refused option; its message is the refusal's own and
// errors.Is reports ErrInvalidOption.
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// Is reports ErrInvalidOption; what Err wraps is found through Unwrap.
func (e *OptionError) Is(target error) bool { return target == ErrInvalidOption }

func invalidOptionf(format string, args ...any) error {
	return &OptionError{Err: fmt.Errorf(format, args...)}
}
