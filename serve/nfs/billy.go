package nfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	billy "github.com/go-git/go-billy/v5"
	nfsfile "github.com/willscott/go-nfs/file"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/volume"
)

// errOldFile is the refusal of a WRITE into a non-empty file this server
// did not make or truncate (see the package documentation).
var errOldFile = errors.New("writing into a file that existed before the server started is not supported: replace it")

// billyFS adapts a filesystem.FS (and its Writer, when writable) to
// billy.Filesystem. One mutex serialises every call: an NFS operation is
// several calls that must see one state, and the read-only implementations
// are not promised to be safe for concurrent use.
type billyFS struct {
	mu      *sync.Mutex
	ro      filesystem.FS
	w       filesystem.Writer // nil when read-only
	writers map[string]filesystem.WritableFile
	closed  bool
	// openRW opens an existing file for writing without truncating it,
	// where the implementation can (FAT, exFAT); nil elsewhere, where
	// files made here are kept open instead (writers).
	openRW func(name string) (filesystem.WritableFile, error)
	// renamed is told of every successful rename, so that the handle
	// table can re-point handles instead of making them stale.
	renamed func(oldpath, newpath string)
}

func newBillyFS(fsys filesystem.FS, readOnly bool) *billyFS {
	b := &billyFS{mu: new(sync.Mutex), ro: fsys, writers: map[string]filesystem.WritableFile{}}
	if w, ok := fsys.(filesystem.Writer); ok && !readOnly {
		b.w = w
		b.openRW = openRWFor(fsys)
	}
	return b
}

// openRWFor returns the open-for-writing of filesystems that have one
// (filesystem.OpenWriter: FAT, exFAT): with it every WRITE opens, writes
// and closes the file, so that nothing stays open between WRITEs and the
// volume is marked clean after each one (a FAT volume with a file open is
// "not closed cleanly" if killed).
func openRWFor(fsys filesystem.FS) func(string) (filesystem.WritableFile, error) {
	if o, ok := fsys.(filesystem.OpenWriter); ok {
		return o.OpenWrite
	}
	return nil
}

// clean makes name an absolute, cleaned path inside the filesystem: ".."
// stops at the root.
func clean(name string) string { return path.Clean("/" + name) }

func pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, filesystem.ErrReadOnly), errors.Is(err, volume.ErrProtected):
		err = errors.Join(err, os.ErrPermission) // NFS3ERR_PERM, as EPERM in a mount
	case errors.Is(err, filesystem.ErrNoSpace):
		err = errors.Join(err, errNoSpace)
	}
	return &os.PathError{Op: op, Path: name, Err: err}
}

// errNoSpace is wrapped so go-nfs's statusFromWriteError could tell it;
// it is kept distinct for the log.
var errNoSpace = errors.New("no space left on device")

func (b *billyFS) lock(op, name string, write bool) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return pathErr(op, name, os.ErrClosed)
	}
	if write && b.w == nil {
		b.mu.Unlock()
		return pathErr(op, name, os.ErrPermission)
	}
	return nil
}

// Capabilities tells go-nfs whether to refuse writes itself (read-only
// is enforced here as well).
func (b *billyFS) Capabilities() billy.Capability {
	c := billy.ReadCapability | billy.SeekCapability
	if b.w != nil {
		c |= billy.WriteCapability | billy.ReadAndWriteCapability | billy.TruncateCapability
	}
	return c
}

// syncLocked makes the last change durable before the client is answered.
func (b *billyFS) syncLocked(op, name string) error {
	return pathErr(op, name, b.w.Sync())
}

// dropWriter closes the writer kept for p (and below it), before p is
// removed or renamed.
func (b *billyFS) dropWriters(p string) error {
	var first error
	for k, wf := range b.writers {
		if k == p || strings.HasPrefix(k, p+"/") {
			if err := wf.Close(); err != nil && first == nil {
				first = err
			}
			delete(b.writers, k)
		}
	}
	return first
}

// createLocked makes or truncates p and keeps it open for writing.
func (b *billyFS) createLocked(p string) (filesystem.WritableFile, error) {
	if err := b.dropWriters(p); err != nil {
		return nil, pathErr("create", p, err)
	}
	wf, err := b.w.Create(p)
	if err != nil {
		return nil, pathErr("create", p, err)
	}
	b.writers[p] = wf
	if err := b.syncLocked("create", p); err != nil {
		return nil, err
	}
	return wf, nil
}

func (b *billyFS) Create(name string) (billy.File, error) {
	return b.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (b *billyFS) Open(name string) (billy.File, error) {
	return b.OpenFile(name, os.O_RDONLY, 0)
}

func (b *billyFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	p := clean(name)
	write := flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC) != 0
	if err := b.lock("open", p, write); err != nil {
		return nil, err
	}
	defer b.mu.Unlock()
	if wf, ok := b.writers[p]; ok {
		if flag&os.O_TRUNC != 0 {
			if err := wf.Truncate(0); err != nil {
				return nil, pathErr("open", p, err)
			}
			return &billyFile{fs: b, name: p, wf: wf, dirty: true}, nil
		}
		return &billyFile{fs: b, name: p, wf: wf}, nil
	}
	if !write {
		f, err := b.ro.Open(p)
		if err != nil {
			return nil, pathErr("open", p, err)
		}
		return &billyFile{fs: b, name: p, f: f}, nil
	}
	fi, err := b.ro.Stat(p)
	switch {
	case err != nil && flag&os.O_CREATE == 0:
		return nil, pathErr("open", p, err)
	case err == nil && fi.IsDir():
		return nil, pathErr("open", p, filesystem.ErrIsDir)
	case b.openRW != nil:
		var wf filesystem.WritableFile
		if err == nil && flag&os.O_TRUNC == 0 {
			wf, err = b.openRW(p)
		} else {
			wf, err = b.w.Create(p)
		}
		if err != nil {
			return nil, pathErr("open", p, err)
		}
		return &billyFile{fs: b, name: p, wf: wf, own: true, dirty: flag&os.O_TRUNC != 0}, nil
	case err == nil && fi.Size() > 0 && flag&os.O_TRUNC == 0:
		// Kept closed until a write needs it: a SETATTR that truncates
		// opens the file before it calls Truncate.
		return &billyFile{fs: b, name: p, old: true}, nil
	}
	wf, err := b.createLocked(p)
	if err != nil {
		return nil, err
	}
	return &billyFile{fs: b, name: p, wf: wf}, nil
}

func (b *billyFS) Stat(name string) (os.FileInfo, error) {
	p := clean(name)
	if err := b.lock("stat", p, false); err != nil {
		return nil, err
	}
	defer b.mu.Unlock()
	fi, err := b.ro.Stat(p)
	if err != nil {
		return nil, pathErr("stat", p, err)
	}
	return withInode(fi), nil
}

func (b *billyFS) Lstat(name string) (os.FileInfo, error) {
	p := clean(name)
	if err := b.lock("lstat", p, false); err != nil {
		return nil, err
	}
	defer b.mu.Unlock()
	fi, err := b.ro.Lstat(p)
	if err != nil {
		return nil, pathErr("lstat", p, err)
	}
	return withInode(fi), nil
}

func (b *billyFS) Rename(oldpath, newpath string) error {
	op, np := clean(oldpath), clean(newpath)
	if err := b.lock("rename", op, true); err != nil {
		return err
	}
	defer b.mu.Unlock()
	if op == np {
		return nil
	}
	if err := b.dropWriters(op); err != nil {
		return pathErr("rename", op, err)
	}
	if err := b.dropWriters(np); err != nil {
		return pathErr("rename", np, err)
	}
	if err := b.w.Rename(op, np); err != nil {
		return pathErr("rename", op, err)
	}
	if err := b.syncLocked("rename", op); err != nil {
		return err
	}
	if b.renamed != nil {
		b.renamed(op, np)
	}
	return nil
}

func (b *billyFS) Remove(name string) error {
	p := clean(name)
	if err := b.lock("remove", p, true); err != nil {
		return err
	}
	defer b.mu.Unlock()
	if err := b.dropWriters(p); err != nil {
		return pathErr("remove", p, err)
	}
	if err := b.w.Remove(p); err != nil {
		return pathErr("remove", p, err)
	}
	return b.syncLocked("remove", p)
}

func (b *billyFS) Join(elem ...string) string { return path.Join(elem...) }

func (b *billyFS) TempFile(dir, prefix string) (billy.File, error) {
	return nil, &os.PathError{Op: "tempfile", Path: dir, Err: errors.ErrUnsupported}
}

func (b *billyFS) ReadDir(name string) ([]os.FileInfo, error) {
	p := clean(name)
	if err := b.lock("readdir", p, false); err != nil {
		return nil, err
	}
	defer b.mu.Unlock()
	ents, err := b.ro.ReadDir(p)
	if err != nil {
		return nil, pathErr("readdir", p, err)
	}
	out := make([]os.FileInfo, 0, len(ents))
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			return nil, pathErr("readdir", path.Join(p, e.Name()), err)
		}
		out = append(out, withInode(fi))
	}
	// go-nfs's readdir cookies are positions in this list: keep it in one
	// order however the filesystem lists.
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (b *billyFS) MkdirAll(name string, perm os.FileMode) error {
	p := clean(name)
	if err := b.lock("mkdir", p, true); err != nil {
		return err
	}
	defer b.mu.Unlock()
	if fi, err := b.ro.Stat(p); err == nil {
		if fi.IsDir() {
			return nil
		}
		return pathErr("mkdir", p, fs.ErrExist)
	}
	var made bool
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		dir := p[:i]
		if _, err := b.ro.Stat(dir); err == nil {
			continue
		}
		if err := b.w.Mkdir(dir); err != nil {
			return pathErr("mkdir", dir, err)
		}
		made = true
	}
	if !made {
		return nil
	}
	return b.syncLocked("mkdir", p)
}

func (b *billyFS) Symlink(target, link string) error {
	p := clean(link)
	if err := b.lock("symlink", p, true); err != nil {
		return err
	}
	defer b.mu.Unlock()
	s, ok := b.w.(filesystem.Symlinker)
	if !ok {
		return pathErr("symlink", p, errors.ErrUnsupported)
	}
	if err := s.Symlink(target, p); err != nil {
		return pathErr("symlink", p, err)
	}
	return b.syncLocked("symlink", p)
}

func (b *billyFS) Readlink(link string) (string, error) {
	p := clean(link)
	if err := b.lock("readlink", p, false); err != nil {
		return "", err
	}
	defer b.mu.Unlock()
	t, err := b.ro.Readlink(p)
	return t, pathErr("readlink", p, err)
}

func (b *billyFS) Chroot(p string) (billy.Filesystem, error) {
	return nil, &os.PathError{Op: "chroot", Path: p, Err: errors.ErrUnsupported}
}

func (b *billyFS) Root() string { return "/" }

// Chmod keeps permission bits where the filesystem has them and accepts
// (as a no-op) the mode a client sets on FAT or exFAT, which have none:
// refusing it would fail every CREATE that carries a mode.
func (b *billyFS) Chmod(name string, mode os.FileMode) error {
	p := clean(name)
	if err := b.lock("chmod", p, true); err != nil {
		return err
	}
	defer b.mu.Unlock()
	c, ok := b.w.(filesystem.Chmoder)
	if !ok {
		return nil
	}
	if err := c.Chmod(p, mode); err != nil {
		return pathErr("chmod", p, err)
	}
	return b.syncLocked("chmod", p)
}

// Lchown and Chown accept and ignore owners: the filesystem layer has no
// way to set one, and every file is served as the server's.
func (b *billyFS) Lchown(name string, uid, gid int) error { return nil }
func (b *billyFS) Chown(name string, uid, gid int) error  { return nil }

func (b *billyFS) Chtimes(name string, atime, mtime time.Time) error {
	p := clean(name)
	if err := b.lock("chtimes", p, true); err != nil {
		return err
	}
	defer b.mu.Unlock()
	if wf, ok := b.writers[p]; ok {
		// The writer's own size and times land on its Sync; settle them
		// first so the times set now are not overwritten later.
		if err := wf.Sync(); err != nil {
			return pathErr("chtimes", p, err)
		}
	}
	if err := b.w.Chtimes(p, atime, mtime); err != nil {
		return pathErr("chtimes", p, err)
	}
	return b.syncLocked("chtimes", p)
}

// close closes every kept writer; no call runs after it.
func (b *billyFS) close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	var first error
	for k, wf := range b.writers {
		if err := wf.Close(); err != nil && first == nil {
			first = err
		}
		delete(b.writers, k)
	}
	return first
}

// billyFile is one OPEN of go-nfs: a read-only file (f), a kept writer
// (wf), or an old non-empty file not yet opened for writing (old).
type billyFile struct {
	fs   *billyFS
	name string
	f    filesystem.File
	wf   filesystem.WritableFile
	old  bool
	pos  int64
	// dirty is set by a write or truncate, so Close syncs only then.
	dirty bool
	// own is set when wf belongs to this OPEN alone (openRW), so Close
	// closes it.
	own bool
}

func (f *billyFile) Name() string { return f.name }

func (f *billyFile) reader() io.ReaderAt {
	if f.wf != nil {
		return f.wf
	}
	return f.f
}

func (f *billyFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.lock("read", f.name, false); err != nil {
		return 0, err
	}
	defer f.fs.mu.Unlock()
	if f.old {
		return 0, pathErr("read", f.name, os.ErrInvalid)
	}
	return f.reader().ReadAt(p, off)
}

func (f *billyFile) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.pos)
	f.pos += int64(n)
	return n, err
}

func (f *billyFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += f.pos
	default:
		return f.pos, pathErr("seek", f.name, errors.ErrUnsupported)
	}
	if off < 0 {
		return f.pos, pathErr("seek", f.name, os.ErrInvalid)
	}
	f.pos = off
	return off, nil
}

func (f *billyFile) Write(p []byte) (int, error) {
	n, err := f.WriteAt(p, f.pos)
	f.pos += int64(n)
	return n, err
}

func (f *billyFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.lock("write", f.name, true); err != nil {
		return 0, err
	}
	defer f.fs.mu.Unlock()
	if f.wf == nil {
		return 0, pathErr("write", f.name, errOldFile)
	}
	f.dirty = true
	n, err := f.wf.WriteAt(p, off)
	return n, pathErr("write", f.name, err)
}

func (f *billyFile) Truncate(size int64) error {
	if err := f.fs.lock("truncate", f.name, true); err != nil {
		return err
	}
	defer f.fs.mu.Unlock()
	if f.wf == nil {
		if size != 0 {
			return pathErr("truncate", f.name, errOldFile)
		}
		wf, err := f.fs.createLocked(f.name)
		if err != nil {
			return err
		}
		f.wf, f.old = wf, false
		return nil
	}
	f.dirty = true
	if err := f.wf.Truncate(size); err != nil {
		return pathErr("truncate", f.name, err)
	}
	if f.own {
		// Synced at Close, once the file is closed: a FAT volume synced
		// with a file open stays marked not cleanly closed.
		return nil
	}
	return f.fs.syncLocked("truncate", f.name)
}

// Close ends one OPEN. A kept writer stays open, but its data and the
// filesystem are synced first: go-nfs answers the WRITE that precedes
// this Close with FILE_SYNC.
func (f *billyFile) Close() error {
	if f.f != nil {
		f.fs.mu.Lock()
		defer f.fs.mu.Unlock()
		return f.f.Close()
	}
	if f.wf == nil || (!f.dirty && !f.own) {
		return nil
	}
	if err := f.fs.lock("close", f.name, true); err != nil {
		return err
	}
	defer f.fs.mu.Unlock()
	if f.own {
		if err := f.wf.Close(); err != nil {
			return pathErr("close", f.name, err)
		}
		if !f.dirty {
			return nil
		}
		return f.fs.syncLocked("sync", f.name)
	}
	if err := f.wf.Sync(); err != nil {
		return pathErr("sync", f.name, err)
	}
	return f.fs.syncLocked("sync", f.name)
}

func (f *billyFile) Lock() error   { return nil }
func (f *billyFile) Unlock() error { return nil }

// withInode gives go-nfs a stable file id where the filesystem has inode
// numbers (ext2/3/4); elsewhere go-nfs hashes the path.
func withInode(fi fs.FileInfo) fs.FileInfo {
	in, ok := fi.Sys().(filesystem.InodeInfo)
	if !ok {
		return fi
	}
	return inodeInfo{FileInfo: fi, sys: &nfsfile.FileInfo{Nlink: uint32(in.Nlink()), Fileid: in.Inode()}}
}

type inodeInfo struct {
	fs.FileInfo
	sys *nfsfile.FileInfo
}

func (i inodeInfo) Sys() any { return i.sys }
