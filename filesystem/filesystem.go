package filesystem

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/cryptvol/cryptvol/internal/fspath"
)

// FS is an open filesystem, read side.
type FS interface {
	// Type is the filesystem's name as blkid spells it: "vfat", "exfat",
	// "ntfs", "ext2", "ext3" or "ext4".
	Type() string
	// Version refines Type where it has variants ("FAT12", "FAT16",
	// "FAT32"), else "".
	Version() string
	// Label is the volume label ("" when none).
	Label() string
	// ID is the serial number or UUID as blkid prints it: "DEAD-BABE" for
	// FAT and exFAT, 16 hex digits for NTFS, a UUID for ext2/3/4.
	ID() string

	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Open(name string) (File, error)
	Readlink(name string) (string, error)
	Statfs() Statfs
	// Close releases the filesystem (and flushes a Writer); the device is
	// the caller's to close.
	Close() error
}

// File is an open file or directory.
type File interface {
	io.Reader
	io.ReaderAt
	io.Seeker
	io.Closer
	Stat() (fs.FileInfo, error)
}

// Statfs is the size and use of a filesystem.
type Statfs struct {
	// BlockSize is the allocation unit: FAT/exFAT/NTFS cluster, ext block.
	BlockSize int
	// TotalBytes is the space for files and metadata; FreeBytes what is
	// unallocated; AvailBytes what an ordinary user can still fill (less
	// than FreeBytes on ext4, which reserves blocks for root).
	TotalBytes, FreeBytes, AvailBytes int64
	// Files and FreeFiles count inodes where the filesystem has a fixed
	// number of them (ext2/3/4); both are 0 otherwise.
	Files, FreeFiles uint64
	// MaxFileSize is the largest file the filesystem holds when that is
	// smaller than the volume (FAT: 4 GiB - 1 byte), else 0.
	MaxFileSize int64
}

// InodeInfo is implemented by the FileInfo.Sys() values of filesystems
// that have inode numbers (ext2/3/4 inodes, NTFS MFT records).
type InodeInfo interface {
	Inode() uint64
	Nlink() uint64
}

// Writer is an FS that can change. Create makes or truncates a regular
// file; Remove deletes a file or an empty directory; Rename replaces an
// existing file at newpath.
type Writer interface {
	FS
	Create(name string) (WritableFile, error)
	Mkdir(name string) error
	Remove(name string) error
	Rename(oldpath, newpath string) error
	Chtimes(name string, atime, mtime time.Time) error
	Sync() error
}

// BatchRenamer is a Writer that renames many files for the flushes of one
// rename (FAT: two barriers, exFAT: one or two, for any number of files),
// so that put publishes the files it wrote under temporary names in one
// step instead of paying a rename's flushes for each (issue 31, item 4).
// RenameAll renames each pair's [0] onto its [1] as Rename does, keeping
// the order of writes Rename's crash safety needs, and with the content
// of every file written before the call on the disk before any new name
// points at it. The pairs name distinct files, and no pair's [1] is
// another's [0]. It returns how many pairs, from the first, were renamed;
// after an error those after are as they were.
type BatchRenamer interface {
	RenameAll(pairs [][2]string) (int, error)
}

// RoomMaker is a Writer whose directories grow for a flush each time
// they fill (FAT: the new clusters are zeroed and on the disk before the
// chain links them), so that put gives a directory the room for the
// entries it will add in one step (issue 31, item 4). MakeRoom makes dir
// (whose parent exists) with room for entries of names, as Mkdir makes
// it, or grows an existing dir once if its free slots are too few. The
// room is a hint: a directory that still fills up grows as before.
type RoomMaker interface {
	MakeRoom(dir string, names []string) error
}

// Symlinker is a Writer whose filesystem has symbolic links (ext2/3/4):
// Symlink makes name a link to target, failing if name exists.
type Symlinker interface {
	Symlink(target, name string) error
}

// OpenWriter is a Writer that can open an existing regular file for
// writing without truncating it (FAT and exFAT): a front end that writes
// a file piece by piece (NFS's WRITE) opens, writes and closes it each
// time, so that no file stays open between requests.
type OpenWriter interface {
	OpenWrite(name string) (WritableFile, error)
}

// Chmoder is a Writer whose filesystem keeps permission bits (ext2/3/4).
type Chmoder interface {
	Chmod(name string, mode fs.FileMode) error
}

// WritableFile is a File opened by Writer.Create.
type WritableFile interface {
	File
	io.Writer
	io.WriterAt
	Truncate(size int64) error
	Sync() error
}

// Dirtier is a filesystem that records an unclean unmount (exFAT's
// VolumeDirty), so a front end can warn before writing on.
type Dirtier interface {
	Dirty() bool
}

// Recoverer is a Writer that, when opened on a filesystem whose last
// session was interrupted, completes or undoes what was left half-way
// before anything else (FAT). Recovered lists what that did (nil when
// there was nothing to do); NeedsRepair is non-nil, wrapping
// ErrNeedsRepair, when the filesystem must be repaired (Check(true))
// before it may change.
type Recoverer interface {
	Recovered() []string
	NeedsRepair() error
}

// Attributer is a Writer whose files carry attributes and a creation
// time (FAT, exFAT). A file that replaces another under a temporary name
// takes them over with KeepMetadata(old, replacement), as rewriting the
// file in place would have kept them; a file whose read-only attribute is
// set is one its owner asked not to be replaced (Mode has no write bits).
type Attributer interface {
	KeepMetadata(old, replacement string) error
	// SetReadOnly sets or clears the read-only attribute (chmod a-w and
	// u+w through a mount).
	SetReadOnly(name string, readOnly bool) error
}

// Checker is an FS that can check (and with repair, mend) itself.
type Checker interface {
	Check(repair bool) (CheckReport, error)
}

// CheckReport is what a check found.
type CheckReport interface {
	// Clean reports whether nothing at all was found.
	Clean() bool
	// Errors reports findings that can lose or damage data (as opposed to
	// wasted space or stale counters).
	Errors() bool
	// String lists the findings, one a line.
	String() string
}

// Sentinel errors (see the package documentation).
var (
	// ErrUnknown means no known filesystem signature was found.
	ErrUnknown = errors.New("no filesystem recognised")
	// ErrUnsupported means the filesystem (or a feature of it) is
	// recognised but cannot be read here.
	ErrUnsupported = errors.New("unsupported filesystem feature")
	// ErrCorrupt means the filesystem's structures are inconsistent.
	ErrCorrupt = errors.New("corrupt filesystem")
	// ErrReadOnly means the filesystem cannot be written (read-only
	// implementation, or opened read-only).
	ErrReadOnly = errors.New("read-only filesystem")
	// ErrTooSmall means a filesystem cannot be made in so few bytes.
	ErrTooSmall = errors.New("too small for the filesystem")
	// ErrNoSpace means the filesystem is full.
	ErrNoSpace = errors.New("no space left on the filesystem")
	// ErrNotDir means a path component or a directory operation names
	// something that is not a directory.
	ErrNotDir = fspath.ErrNotDir
	// ErrIsDir means a file operation names a directory.
	ErrIsDir = fspath.ErrIsDir
	// ErrNotEmpty means a directory to remove (or to replace by a
	// rename) has entries.
	ErrNotEmpty = errors.New("directory not empty")
	// ErrFileTooLarge means a file would grow beyond what the filesystem
	// (FAT: 4 GiB - 1 byte) or the volume holds. It is ErrNoSpace too.
	ErrFileTooLarge = fmt.Errorf("file too large: %w", ErrNoSpace)
	// ErrNeedsRepair means the filesystem is known to be damaged in a
	// way that a change could make worse (FAT cross-links): it stays
	// readable, and changes wait for Check(true).
	// It is ErrCorrupt too.
	ErrNeedsRepair = fmt.Errorf("needs repair: %w", ErrCorrupt)
)

// classified keeps an implementation's error (its message, its chain)
// and adds this package's sentinel to the chain.
type classified struct {
	err  error
	kind error
}

func (e *classified) Error() string   { return e.err.Error() }
func (e *classified) Unwrap() []error { return []error{e.err, e.kind} }

// classify adds to err the first sentinel of ours whose implementation
// counterpart (the keys of table) is in err's chain.
func classify(err error, table []errorPair) error {
	if err == nil {
		return nil
	}
	for _, p := range table {
		if errors.Is(err, p.theirs) {
			if errors.Is(err, p.ours) {
				return err
			}
			return &classified{err: err, kind: p.ours}
		}
	}
	return err
}

type errorPair struct{ theirs, ours error }

// file adds this package's sentinels to the errors of an
// implementation's file.
type file struct {
	f     File
	table []errorPair
}

func (f *file) Read(p []byte) (int, error) {
	n, err := f.f.Read(p)
	return n, classifyIO(err, f.table)
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.f.ReadAt(p, off)
	return n, classifyIO(err, f.table)
}

func (f *file) Seek(off int64, whence int) (int64, error) {
	n, err := f.f.Seek(off, whence)
	return n, classify(err, f.table)
}

func (f *file) Stat() (fs.FileInfo, error) {
	fi, err := f.f.Stat()
	return fi, classify(err, f.table)
}

func (f *file) Close() error { return classify(f.f.Close(), f.table) }

// classifyIO is classify that leaves io.EOF as it is (callers compare it
// with ==).
func classifyIO(err error, table []errorPair) error {
	if err == io.EOF {
		return err
	}
	return classify(err, table)
}

// allErrors are every implementation's tables, for Classify.
var allErrors = [][]errorPair{fatErrors, exfatErrors, ext4WriteErrors, ntfsErrors}

// Classify adds this package's sentinel to an error that came from an
// implementation package directly (fat, exfat, ext4, ntfs) rather than
// through this package, as front ends that hold an implementation's
// filesystem get them; an error that already has one is returned as it
// is.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	for _, t := range allErrors {
		for _, p := range t {
			if errors.Is(err, p.theirs) {
				return classify(err, []errorPair{p})
			}
		}
	}
	return err
}
