package exfat

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
	// ErrNotExFAT means the boot region does not describe an exFAT volume.
	ErrNotExFAT = errors.New("exfat: not an exFAT filesystem")
	// ErrCorrupt means an on-disk structure is inconsistent: a cluster
	// chain that loops or leaves the heap, an entry set with a wrong
	// checksum, a file larger than its allocation, and so on.
	ErrCorrupt = errors.New("exfat: corrupt filesystem")
	// ErrNoSpace means no free cluster is left (or a directory reached the
	// 256 MiB the specification allows).
	ErrNoSpace = errors.New("exfat: no space left on volume")
	// ErrNotEmpty is returned when removing or replacing a non-empty
	// directory.
	ErrNotEmpty = errors.New("exfat: directory not empty")
	// ErrIsDir is returned when a file operation is attempted on a directory.
	ErrIsDir = errors.New("exfat: is a directory")
	// ErrNotDir is returned when a path component or a directory operation
	// names a file.
	ErrNotDir = errors.New("exfat: not a directory")
	// ErrInvalidName is returned for names exFAT cannot store: empty, "."
	// or "..", longer than 255 UTF-16 units, not valid UTF-8, containing
	// control characters or any of "*/:<>?\|, or ending in a space or a dot
	// (which Windows cannot open).
	ErrInvalidName = errors.New("exfat: invalid file name")
	// ErrFileTooLarge is returned when a file would grow past what the
	// volume's cluster heap could ever hold.
	ErrFileTooLarge = errors.New("exfat: file too large")
	// ErrReadOnly is returned for writes on a filesystem opened read-only
	// (or on a device that is not an io.WriterAt).
	ErrReadOnly = errors.New("exfat: read-only filesystem")
	// ErrUnsupported is returned for a volume this package cannot hold:
	// one whose FAT would not fit in this process's address space.
	ErrUnsupported = errors.New("exfat: unsupported volume")
	// ErrTooSmall is returned by Format when the device cannot hold an
	// exFAT volume with the requested (or mkfs.exfat's default) layout.
	ErrTooSmall = errors.New("exfat: device too small")
	// ErrNeedsRepair is returned for every change to a filesystem found,
	// by the first change that would free clusters, to have cross-linked
	// files (clusters claimed by two of them): freeing them would hand one
	// file's data to the next allocation. It wraps ErrCorrupt.
	ErrNeedsRepair = fmt.Errorf("%w: cross-linked files, changes are refused until it is repaired", ErrCorrupt)
	// ErrCannotShrink refuses a Resize that would cut off clusters in use.
	ErrCannotShrink = errors.New("cannot shrink the exFAT filesystem")
)

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
