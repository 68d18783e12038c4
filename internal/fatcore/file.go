package fatcore

import (
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"sort"
)

// Backend is what an open File asks of its filesystem. N is the state
// all handles of one file share (its clusters, what has still to reach
// the disk); D is a directory's cached entries. A File holds the lock
// (Lock/Unlock) around every call into the Backend.
type Backend[N node, D any] interface {
	Lock()
	Unlock()
	// Closed reports whether the filesystem has been closed.
	Closed() bool
	// Writable returns the error a change must fail with (read-only,
	// needs repair), or nil.
	Writable() error
	// Device is the writer of the filesystem, nil when it was opened
	// read-only. Sync syncs it when it has a Sync method.
	Device() io.WriterAt
	Size(n N) int64
	// ReadData fills p from the file's content at off (off+len(p) is
	// within Size).
	ReadData(n N, p []byte, off int64) error
	// WriteData writes p at off, growing the file as needed (File then
	// Touches it).
	WriteData(n N, p []byte, off int64) error
	Resizer[N]
	// Commit writes n's pending changes to the disk in the filesystem's
	// order (see each package's node).
	Commit(n N) error
	// Release drops one reference to n, taken when the File was opened.
	Release(n N) error
	Info(n N) iofs.FileInfo
	DirInfo(d D) iofs.FileInfo
	List(d D) ([]iofs.DirEntry, error)
	// ErrIsDir and ErrNotDir are the package's own sentinels.
	ErrIsDir() error
	ErrNotDir() error
}

// File is an open file or directory. Its methods are safe for concurrent
// use. Reads and writes go straight to the device (no data cache); size,
// first cluster and modification time reach the directory entry on Sync,
// Close, or FS.Sync.
type File[N node, D any] struct {
	b     Backend[N, D]
	n     N // the file's state; unset for a directory
	dir   D // the directory's cache; unset for a file
	isDir bool
	name  string
	flag  int
	off   int64

	closed  bool
	listing []iofs.DirEntry // directory entries not yet returned by ReadDir
	listed  bool
}

// NewFile returns a handle on file n, whose reference the caller has
// taken (Close releases it).
func NewFile[N node, D any](b Backend[N, D], n N, name string, flag int) *File[N, D] {
	return &File[N, D]{b: b, n: n, name: name, flag: flag}
}

// NewDir returns a handle on directory d.
func NewDir[N node, D any](b Backend[N, D], d D, name string, flag int) *File[N, D] {
	return &File[N, D]{b: b, dir: d, isDir: true, name: name, flag: flag}
}

// AccessMode masks the os.O_RDONLY/O_WRONLY/O_RDWR part of a flag.
const AccessMode = os.O_RDONLY | os.O_WRONLY | os.O_RDWR

func (f *File[N, D]) check(op string, write bool) error {
	if f == nil || f.b == nil {
		return PathErr(op, "", iofs.ErrInvalid)
	}
	if f.closed || f.b.Closed() {
		return PathErr(op, f.name, iofs.ErrClosed)
	}
	if f.isDir {
		return PathErr(op, f.name, f.b.ErrIsDir())
	}
	if write {
		if f.flag&AccessMode == os.O_RDONLY {
			return PathErr(op, f.name, fmt.Errorf("%w: file opened read-only", iofs.ErrPermission))
		}
		if err := f.b.Writable(); err != nil {
			return PathErr(op, f.name, err)
		}
	} else if f.flag&AccessMode == os.O_WRONLY {
		return PathErr(op, f.name, fmt.Errorf("%w: file opened write-only", iofs.ErrPermission))
	}
	return nil
}

// Name returns the name the file was opened with.
func (f *File[N, D]) Name() string { return f.name }

// ReadAt reads len(p) bytes at off; fewer only at the end of the file,
// with io.EOF.
func (f *File[N, D]) ReadAt(p []byte, off int64) (int, error) {
	f.b.Lock()
	defer f.b.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, PathErr("read", f.name, iofs.ErrInvalid)
	}
	return f.readAt(p, off)
}

func (f *File[N, D]) readAt(p []byte, off int64) (int, error) {
	size := f.b.Size(f.n)
	if off >= size {
		return 0, io.EOF
	}
	n := len(p)
	if int64(n) > size-off {
		n = int(size - off)
	}
	if err := f.b.ReadData(f.n, p[:n], off); err != nil {
		return 0, PathErr("read", f.name, err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Read reads from the current offset.
func (f *File[N, D]) Read(p []byte) (int, error) {
	f.b.Lock()
	defer f.b.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := f.readAt(p, f.off)
	f.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// WriteAt writes p at off, growing the file (with zeros in any gap).
func (f *File[N, D]) WriteAt(p []byte, off int64) (int, error) {
	f.b.Lock()
	defer f.b.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, PathErr("write", f.name, iofs.ErrInvalid)
	}
	if f.flag&os.O_APPEND != 0 {
		return 0, PathErr("write", f.name, fmt.Errorf("%w: WriteAt on a file opened with O_APPEND", iofs.ErrInvalid))
	}
	if len(p) == 0 {
		return 0, nil
	}
	if err := f.b.WriteData(f.n, p, off); err != nil {
		return 0, PathErr("write", f.name, err)
	}
	Touch(f.b, f.n)
	return len(p), nil
}

// Write writes at the current offset (at the end with O_APPEND).
func (f *File[N, D]) Write(p []byte) (int, error) {
	f.b.Lock()
	defer f.b.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if f.flag&os.O_APPEND != 0 {
		f.off = f.b.Size(f.n)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if err := f.b.WriteData(f.n, p, f.off); err != nil {
		return 0, PathErr("write", f.name, err)
	}
	Touch(f.b, f.n)
	f.off += int64(len(p))
	return len(p), nil
}

// Seek sets the offset for the next Read or Write.
func (f *File[N, D]) Seek(offset int64, whence int) (int64, error) {
	f.b.Lock()
	defer f.b.Unlock()
	if f.closed {
		return 0, PathErr("seek", f.name, iofs.ErrClosed)
	}
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.off
	case io.SeekEnd:
		if !f.isDir {
			base = f.b.Size(f.n)
		}
	default:
		return 0, PathErr("seek", f.name, iofs.ErrInvalid)
	}
	if base+offset < 0 {
		return 0, PathErr("seek", f.name, iofs.ErrInvalid)
	}
	f.off = base + offset
	if f.isDir && f.off == 0 {
		f.listed, f.listing = false, nil
	}
	return f.off, nil
}

// Truncate changes the file's size. Growing fills with zeros. Shrinking to
// zero keeps the old clusters until the next commit, so a crash before it
// leaves the previous content whole.
func (f *File[N, D]) Truncate(size int64) error {
	f.b.Lock()
	defer f.b.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	return PathErr("truncate", f.name, Truncate(f.b, f.n, size))
}

// Sync commits the file's size, first cluster and time to its directory
// entry (after the allocation tables), and syncs the device if it can.
func (f *File[N, D]) Sync() error {
	f.b.Lock()
	defer f.b.Unlock()
	if f.closed || f.b.Closed() {
		return PathErr("sync", f.name, iofs.ErrClosed)
	}
	w := f.b.Device()
	if f.isDir || w == nil {
		return nil
	}
	if err := f.b.Commit(f.n); err != nil {
		return PathErr("sync", f.name, err)
	}
	return PathErr("sync", f.name, SyncDevice(w))
}

// Device is a device a filesystem is read from and written to in place
// (a resize's).
type Device interface {
	io.ReaderAt
	io.WriterAt
}

// SyncDevice syncs w when it can be synced (an *os.File, say), so that
// what was written before is on stable storage before what comes next: a
// device without a Sync method has nothing to flush.
func SyncDevice(w io.WriterAt) error {
	if s, ok := w.(interface{ Sync() error }); ok {
		return s.Sync()
	}
	return nil
}

// Close commits the file and releases it.
func (f *File[N, D]) Close() error {
	if f == nil || f.b == nil {
		return iofs.ErrInvalid
	}
	f.b.Lock()
	defer f.b.Unlock()
	if f.closed {
		return PathErr("close", f.name, iofs.ErrClosed)
	}
	f.closed = true
	if f.isDir || f.b.Closed() {
		return nil
	}
	var err error
	if f.b.Device() != nil {
		err = f.b.Commit(f.n)
	}
	if rerr := f.b.Release(f.n); err == nil {
		err = rerr
	}
	return PathErr("close", f.name, err)
}

// Stat describes the open file.
func (f *File[N, D]) Stat() (iofs.FileInfo, error) {
	f.b.Lock()
	defer f.b.Unlock()
	if f.closed {
		return nil, PathErr("stat", f.name, iofs.ErrClosed)
	}
	if f.isDir {
		return f.b.DirInfo(f.dir), nil
	}
	return f.b.Info(f.n), nil
}

// ReadDir reads the directory's entries, sorted by name: all of them when
// n <= 0, else at most n per call (io.EOF at the end), as fs.ReadDirFile.
func (f *File[N, D]) ReadDir(n int) ([]iofs.DirEntry, error) {
	f.b.Lock()
	defer f.b.Unlock()
	if f.closed {
		return nil, PathErr("readdir", f.name, iofs.ErrClosed)
	}
	if !f.isDir {
		return nil, PathErr("readdir", f.name, f.b.ErrNotDir())
	}
	var err error
	if !f.listed {
		f.listing, err = f.b.List(f.dir)
		f.listed = true
	}
	if n <= 0 {
		out := f.listing
		f.listing = nil
		return out, err
	}
	if len(f.listing) == 0 {
		return nil, io.EOF
	}
	if n > len(f.listing) {
		n = len(f.listing)
	}
	out := f.listing[:n:n]
	f.listing = f.listing[n:]
	return out, err
}

// Listing returns the entries of a directory's live set sorted by name.
func Listing[E comparable, I iofs.DirEntry](live map[E]struct{}, info func(E) I) []iofs.DirEntry {
	out := make([]iofs.DirEntry, 0, len(live))
	for e := range live {
		out = append(out, info(e))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}
