package fat

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// Sentinel errors. Every error the package returns wraps one of these (or one
// of the io/fs sentinels fs.ErrNotExist, fs.ErrExist, fs.ErrInvalid,
// fs.ErrClosed, fs.ErrPermission), so callers can test them with errors.Is
// and still print a message that says what was wrong and where.
var (
	// ErrNotFAT means the boot sector does not describe a FAT filesystem.
	ErrNotFAT = errors.New("fat: not a FAT filesystem")
	// ErrCorrupt means an on-disk structure is inconsistent: a cluster
	// chain that loops or leaves the volume, a file larger than its chain,
	// a directory full of garbage, and so on.
	ErrCorrupt = errors.New("fat: corrupt filesystem")
	// ErrNoSpace means no free cluster (or no free root directory slot on
	// FAT12/FAT16) is left.
	ErrNoSpace = errors.New("fat: no space left on volume")
	// ErrNotEmpty is returned when removing or replacing a non-empty
	// directory.
	ErrNotEmpty = errors.New("fat: directory not empty")
	// ErrIsDir is returned when a file operation is attempted on a directory.
	ErrIsDir = errors.New("fat: is a directory")
	// ErrNotDir is returned when a path component or a directory operation
	// names a file.
	ErrNotDir = errors.New("fat: not a directory")
	// ErrInvalidName is returned for names FAT cannot store: empty, "." or
	// "..", longer than 255 UTF-16 units, containing control characters or
	// any of "*/:<>?\|, or ending in a space or a dot.
	ErrInvalidName = errors.New("fat: invalid file name")
	// ErrFileTooLarge is returned when a file would grow past 4 GiB - 1,
	// the largest size a FAT directory entry can record.
	ErrFileTooLarge = errors.New("fat: file too large")
	// ErrReadOnly is returned for writes on a filesystem opened read-only
	// (or on a device that is not an io.WriterAt).
	ErrReadOnly = errors.New("fat: read-only filesystem")
	// ErrTooSmall is returned by Format when the device cannot hold a
	// viable filesystem of the requested kind.
	ErrTooSmall = errors.New("fat: device too small")
	// ErrNeedsRepair is returned for every change to a filesystem known to
	// have cross-linked files (clusters claimed by two of them), until
	// Check(true) has repaired it: writing there could destroy one file
	// through the other. It wraps ErrCorrupt.
	ErrNeedsRepair = fmt.Errorf("%w: cross-linked files, changes are refused until it is repaired", ErrCorrupt)
	// ErrCannotShrink refuses a Shrink that would lose data or change the
	// filesystem's type.
	ErrCannotShrink = errors.New("cannot shrink the FAT filesystem")
)

// Short names for the io/fs sentinels used throughout.
var (
	errClosed   = fs.ErrClosed
	errNotExist = fs.ErrNotExist
	errExist    = fs.ErrExist
	errInvalid  = fs.ErrInvalid
)

// corruptf returns an error wrapping ErrCorrupt with a formatted detail.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// pathErr wraps err in an *fs.PathError, the form os and io/fs use.
var pathErr = fatcore.PathErr
