package fat

import (
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"sort"
)

// File is an open file or directory. Its methods are safe for concurrent
// use. Reads and writes go straight to the device (no data cache); size,
// first cluster and modification time reach the directory entry on Sync,
// Close, or FS.Sync.
type File struct {
	fs   *FS
	n    *node     // nil for a directory
	dir  *dirCache // non-nil for a directory
	name string
	flag int
	off  int64

	closed  bool
	listing []iofs.DirEntry // directory entries not yet returned by ReadDir
	listed  bool
}

// Open opens a file or directory for reading.
func (fs *FS) Open(name string) (*File, error) {
	return fs.OpenFile(name, os.O_RDONLY, 0)
}

// Create creates or truncates a file and opens it read-write.
func (fs *FS) Create(name string) (*File, error) {
	return fs.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// OpenFile opens a file with the os package's flags (O_RDONLY, O_WRONLY,
// O_RDWR, O_APPEND, O_CREATE, O_EXCL, O_TRUNC). A new file whose perm has
// no write bit gets the read-only attribute. Directories open only with
// O_RDONLY.
func (fs *FS) OpenFile(name string, flag int, perm iofs.FileMode) (*File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, err := fs.openFile(name, flag, perm)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	return f, nil
}

const accessMode = os.O_RDONLY | os.O_WRONLY | os.O_RDWR

func (fs *FS) openFile(name string, flag int, perm iofs.FileMode) (*File, error) {
	if fs.closed {
		return nil, errClosed
	}
	writing := flag&accessMode != os.O_RDONLY || flag&(os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
	if writing {
		if err := fs.writable(); err != nil {
			return nil, err
		}
	}
	parent, e, base, err := fs.resolve(name)
	if err != nil {
		return nil, err
	}
	if parent == nil { // the root
		if writing {
			return nil, ErrIsDir
		}
		return &File{fs: fs, dir: fs.root, name: name, flag: flag}, nil
	}
	if e == nil {
		if flag&os.O_CREATE == 0 {
			return nil, errNotExist
		}
		if err := checkName(base); err != nil {
			return nil, err
		}
		if err := parent.corrupt(); err != nil {
			return nil, err
		}
		tmpl := &entry{attr: AttrArchive}
		if perm&0o222 == 0 {
			tmpl.attr |= AttrReadOnly
		}
		tmpl.setCreated(fs.now(), fs.loc)
		e, err = parent.add(base, tmpl, true, nil)
		if err != nil {
			return nil, err
		}
		n := &node{ent: e}
		e.node = n
		fs.markDirty(n)
		fs.hold(n)
		return &File{fs: fs, n: n, name: name, flag: flag}, nil
	}
	if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
		return nil, errExist
	}
	if e.isDir() {
		if writing {
			return nil, ErrIsDir
		}
		d, err := fs.openDir(parent, e)
		if err != nil {
			return nil, err
		}
		return &File{fs: fs, dir: d, name: name, flag: flag}, nil
	}
	if writing && e.attr&AttrReadOnly != 0 && flag&accessMode != os.O_RDONLY {
		return nil, iofs.ErrPermission
	}
	n, err := fs.openNode(e)
	if err != nil {
		return nil, err
	}
	if flag&os.O_TRUNC != 0 && flag&accessMode != os.O_RDONLY && e.start != 0 {
		// The old content is freed once the new one is committed.
		if err := fs.ensureUnshared(); err != nil {
			return nil, err
		}
	}
	fs.hold(n)
	f := &File{fs: fs, n: n, name: name, flag: flag}
	if flag&os.O_TRUNC != 0 && flag&accessMode != os.O_RDONLY {
		if err := fs.truncate(n, 0); err != nil {
			fs.release(n)
			return nil, err
		}
	}
	return f, nil
}

func (f *File) check(op string, write bool) error {
	if f == nil || f.fs == nil {
		return pathErr(op, "", errInvalid)
	}
	if f.closed || f.fs.closed {
		return pathErr(op, f.name, errClosed)
	}
	if f.dir != nil {
		return pathErr(op, f.name, ErrIsDir)
	}
	if write {
		if f.flag&accessMode == os.O_RDONLY {
			return pathErr(op, f.name, fmt.Errorf("%w: file opened read-only", iofs.ErrPermission))
		}
		if err := f.fs.writable(); err != nil {
			return pathErr(op, f.name, err)
		}
	} else if f.flag&accessMode == os.O_WRONLY {
		return pathErr(op, f.name, fmt.Errorf("%w: file opened write-only", iofs.ErrPermission))
	}
	return nil
}

// Name returns the name the file was opened with.
func (f *File) Name() string { return f.name }

// ReadAt reads len(p) bytes at off; fewer only at the end of the file,
// with io.EOF.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.name, errInvalid)
	}
	return f.readAt(p, off)
}

func (f *File) readAt(p []byte, off int64) (int, error) {
	size := int64(f.n.ent.size)
	if off >= size {
		return 0, io.EOF
	}
	n := len(p)
	if int64(n) > size-off {
		n = int(size - off)
	}
	if err := f.fs.readData(f.n, p[:n], off); err != nil {
		return 0, pathErr("read", f.name, err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Read reads from the current offset.
func (f *File) Read(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
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
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("write", f.name, errInvalid)
	}
	if f.flag&os.O_APPEND != 0 {
		return 0, pathErr("write", f.name, fmt.Errorf("%w: WriteAt on a file opened with O_APPEND", errInvalid))
	}
	if len(p) == 0 {
		return 0, nil
	}
	if err := f.fs.writeAtNode(f.n, p, off); err != nil {
		return 0, pathErr("write", f.name, err)
	}
	return len(p), nil
}

// Write writes at the current offset (at the end with O_APPEND).
func (f *File) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if f.flag&os.O_APPEND != 0 {
		f.off = int64(f.n.ent.size)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if err := f.fs.writeAtNode(f.n, p, f.off); err != nil {
		return 0, pathErr("write", f.name, err)
	}
	f.off += int64(len(p))
	return len(p), nil
}

// Seek sets the offset for the next Read or Write.
func (f *File) Seek(offset int64, whence int) (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, pathErr("seek", f.name, errClosed)
	}
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.off
	case io.SeekEnd:
		if f.n != nil {
			base = int64(f.n.ent.size)
		}
	default:
		return 0, pathErr("seek", f.name, errInvalid)
	}
	if base+offset < 0 {
		return 0, pathErr("seek", f.name, errInvalid)
	}
	f.off = base + offset
	if f.dir != nil && f.off == 0 {
		f.listed, f.listing = false, nil
	}
	return f.off, nil
}

// Truncate changes the file's size. Growing fills with zeros. Shrinking to
// zero keeps the old clusters until the next commit, so a crash before it
// leaves the previous content whole.
func (f *File) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	return pathErr("truncate", f.name, f.fs.truncate(f.n, size))
}

// Sync commits the file's size, first cluster and time to its directory
// entry (after the FAT), and syncs the device if it can.
func (f *File) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed || f.fs.closed {
		return pathErr("sync", f.name, errClosed)
	}
	if f.n == nil || f.fs.w == nil {
		return nil
	}
	if err := f.fs.commit(f.n); err != nil {
		return pathErr("sync", f.name, err)
	}
	if s, ok := f.fs.w.(interface{ Sync() error }); ok {
		return pathErr("sync", f.name, s.Sync())
	}
	return nil
}

// Close commits the file and releases it.
func (f *File) Close() error {
	if f == nil || f.fs == nil {
		return errInvalid
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, errClosed)
	}
	f.closed = true
	if f.n == nil || f.fs.closed {
		return nil
	}
	var err error
	if f.fs.w != nil {
		err = f.fs.commit(f.n)
	}
	if rerr := f.fs.release(f.n); err == nil {
		err = rerr
	}
	return pathErr("close", f.name, err)
}

// Stat describes the open file.
func (f *File) Stat() (iofs.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return nil, pathErr("stat", f.name, errClosed)
	}
	if f.dir != nil {
		if f.dir.self == nil {
			return f.fs.rootInfo(), nil
		}
		return f.fs.info(f.dir.self), nil
	}
	return f.fs.info(f.n.ent), nil
}

// ReadDir reads the directory's entries, sorted by name: all of them when
// n <= 0, else at most n per call (io.EOF at the end), as fs.ReadDirFile.
func (f *File) ReadDir(n int) ([]iofs.DirEntry, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return nil, pathErr("readdir", f.name, errClosed)
	}
	if f.dir == nil {
		return nil, pathErr("readdir", f.name, ErrNotDir)
	}
	var err error
	if !f.listed {
		f.listing, err = f.fs.list(f.dir)
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

// list returns a directory's entries sorted by name, and an ErrCorrupt
// error naming any invalid entries (which are left out).
func (fs *FS) list(d *dirCache) ([]iofs.DirEntry, error) {
	out := make([]iofs.DirEntry, 0, len(d.live))
	for e := range d.live {
		out = append(out, fs.info(e))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, d.corrupt()
}
