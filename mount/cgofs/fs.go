//go:build windows || (linux && cgofuse)

package cgofs

import (
	"errors"
	"io"
	iofs "io/fs"
	"math"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/winfsp/cgofuse/fuse"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/fserrno"
	"github.com/cryptvol/cryptvol/volume"
)

// numbers are cgofuse's spelling of the errnos (on Windows they are
// WinFsp's, not syscall's).
var numbers = fserrno.Numbers[int]{
	NOENT: fuse.ENOENT, EXIST: fuse.EEXIST, NOTEMPTY: fuse.ENOTEMPTY,
	ISDIR: fuse.EISDIR, NOTDIR: fuse.ENOTDIR, INVAL: fuse.EINVAL,
	NOSPC: fuse.ENOSPC, FBIG: fuse.EFBIG, ROFS: fuse.EROFS,
	PERM: fuse.EPERM, ACCES: fuse.EACCES,
}

// FS is cgofuse's file system object over a cryptvol filesystem. Its
// zero value is not usable; New makes one.
type FS struct {
	fuse.FileSystemBase

	mu      sync.Mutex
	ro      filesystem.FS
	w       filesystem.Writer // nil when read-only
	openW   func(string) (filesystem.WritableFile, error)
	folds   bool // names compare without case (FAT, exFAT)
	handles map[uint64]*handle
	next    uint64
	// writers holds the one WritableFile open on each file, shared by
	// every handle that writes it: two handles of one file must not
	// keep two views of its size and clusters. The key is key(path):
	// "/A.TXT" and "/a.txt" are one file on FAT.
	writers  map[string]*writer
	uid, gid uint32
	mounted  time.Time
	logf     func(string, ...any)
	closed   bool

	protectedOnce sync.Once
}

// handle is one open of a file or directory.
type handle struct {
	path string
	dir  bool
	f    filesystem.File // a read-only open, nil for writers
	w    *writer
	// old marks a handle opened for writing on a filesystem that can
	// only write a file from the start (no filesystem.OpenWriter), on a
	// file that is not empty: it reads through f until a truncation to
	// zero (the kernel's O_TRUNC, sent as a separate request) gives it
	// a writer; a write before that fails.
	old bool
}

// writer is a WritableFile, the path it was opened at and the number of
// handles using it.
type writer struct {
	wf   filesystem.WritableFile
	name string
	refs int
}

// New returns the adapter for fsys, writable when fsys is a
// filesystem.Writer and readOnly is false.
func New(fsys filesystem.FS, o Options) *FS {
	f := &FS{
		ro:      fsys,
		handles: map[uint64]*handle{},
		writers: map[string]*writer{},
		mounted: time.Now(),
		logf:    func(string, ...any) {},
		folds:   fsys.Type() == "vfat" || fsys.Type() == "exfat",
	}
	if o.Logger != nil {
		f.logf = o.Logger.Printf
	}
	if w, ok := fsys.(filesystem.Writer); ok && !o.ReadOnly {
		f.w = w
		if ow, ok := fsys.(filesystem.OpenWriter); ok {
			f.openW = ow.OpenWrite
		}
	}
	f.uid, f.gid = owner(o)
	return f
}

// fail turns err into a negative errno, logging what the table does not
// know (it is an I/O error then) and the first refusal of hidden-volume
// protection.
func (f *FS) fail(op, name string, err error) int {
	if errors.Is(err, volume.ErrProtected) {
		f.protectedOnce.Do(func() {
			f.logf("%s %s: %v; the filesystem refuses every write from now on (data written before is intact)", op, name, err)
		})
	}
	if e, ok := fserrno.Of(err, &numbers); ok {
		return -e
	}
	f.logf("%s %s: %v", op, name, err)
	return -fuse.EIO
}

// lock takes the lock, failing with EROFS for a change (write) when the
// filesystem is read-only and with EIO once it is closed.
func (f *FS) lock(write bool) int {
	f.mu.Lock()
	switch {
	case f.closed:
		f.mu.Unlock()
		return -fuse.EIO
	case write && f.w == nil:
		f.mu.Unlock()
		return -fuse.EROFS
	}
	return 0
}

// clean makes a FUSE path (always absolute; "\" never appears, WinFsp
// translates it) a cleaned path of the filesystem.
func clean(p string) string { return path.Clean("/" + p) }

// statLocked describes p, from its open writer when it has one (whose
// size is ahead of the directory entry until it is closed).
func (f *FS) statLocked(p string) (iofs.FileInfo, error) {
	if w := f.writers[f.key(p)]; w != nil {
		return w.wf.Stat()
	}
	return f.ro.Lstat(p)
}

func (f *FS) fill(fi iofs.FileInfo, st *fuse.Stat_t) {
	*st = fuse.Stat_t{}
	m := fi.Mode()
	perm := uint32(m.Perm())
	switch {
	case m.IsDir():
		st.Mode = fuse.S_IFDIR
		if perm == 0 {
			perm = 0o755
		}
	case m&iofs.ModeSymlink != 0:
		st.Mode = fuse.S_IFLNK
		perm = 0o777
	default:
		st.Mode = fuse.S_IFREG
		if perm == 0 {
			perm = 0o644
		}
	}
	if f.w == nil {
		perm &^= 0o222
	}
	st.Mode |= perm
	st.Nlink = 1
	if in, ok := fi.Sys().(filesystem.InodeInfo); ok && in.Nlink() > 0 && !m.IsDir() {
		st.Nlink = uint32(min(in.Nlink(), math.MaxUint32))
	}
	st.Uid, st.Gid = f.uid, f.gid
	st.Size = fi.Size()
	bs := int64(f.ro.Statfs().BlockSize)
	if bs <= 0 {
		bs = 512
	}
	st.Blksize = 128 << 10 // what cp and stdio size their buffers by
	st.Blocks = (st.Size + bs - 1) / bs * bs / 512
	mtime := fi.ModTime()
	if mtime.IsZero() {
		mtime = f.mounted // FAT's root has no times
	}
	atime := mtime
	if a, ok := fi.(interface{ AccessTime() time.Time }); ok && a.AccessTime().After(mtime) {
		atime = a.AccessTime()
	}
	st.Mtim = fuse.NewTimespec(mtime)
	st.Atim = fuse.NewTimespec(atime)
	st.Ctim = st.Mtim
	st.Birthtim = st.Mtim
}

// Getattr describes a file or directory.
func (f *FS) Getattr(p string, st *fuse.Stat_t, fh uint64) int {
	if e := f.lock(false); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	p = clean(p)
	var fi iofs.FileInfo
	var err error
	if h := f.handles[fh]; h != nil && h.w != nil {
		fi, err = h.w.wf.Stat()
	} else {
		fi, err = f.statLocked(p)
	}
	if err != nil {
		return f.fail("stat", p, err)
	}
	f.fill(fi, st)
	return 0
}

// Statfs reports the size and free space.
func (f *FS) Statfs(p string, st *fuse.Statfs_t) int {
	if e := f.lock(false); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	s := f.ro.Statfs()
	bs := uint64(max(s.BlockSize, 512))
	*st = fuse.Statfs_t{
		Bsize: bs, Frsize: bs,
		Blocks: uint64(s.TotalBytes) / bs, Bfree: uint64(s.FreeBytes) / bs, Bavail: uint64(s.AvailBytes) / bs,
		Files: s.Files, Ffree: s.FreeFiles, Favail: s.FreeFiles,
		Namemax: 255,
	}
	return 0
}

// Mkdir makes a directory.
func (f *FS) Mkdir(p string, mode uint32) int {
	if e := f.lock(true); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	p = clean(p)
	if err := f.w.Mkdir(p); err != nil {
		return f.fail("mkdir", p, err)
	}
	if c, ok := f.w.(filesystem.Chmoder); ok {
		if err := c.Chmod(p, iofs.FileMode(mode&0o7777)); err != nil {
			return f.fail("chmod", p, err)
		}
	}
	return 0
}

// Unlink removes a file (or a symbolic link).
func (f *FS) Unlink(p string) int { return f.remove(p, false) }

// Rmdir removes an empty directory.
func (f *FS) Rmdir(p string) int { return f.remove(p, true) }

func (f *FS) remove(p string, dir bool) int {
	if e := f.lock(true); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	p = clean(p)
	if p == "/" {
		return -fuse.EBUSY
	}
	fi, err := f.ro.Lstat(p)
	if err != nil {
		return f.fail("remove", p, err)
	}
	switch {
	case dir && !fi.IsDir():
		return -fuse.ENOTDIR
	case !dir && fi.IsDir():
		return -fuse.EISDIR
	}
	if err := f.w.Remove(p); err != nil {
		return f.fail("remove", p, err)
	}
	// Handles still open on the removed file keep their writer or file;
	// a new file of the same name gets its own.
	delete(f.writers, f.key(p))
	for _, h := range f.handles {
		if h.path != "" && f.sameName(h.path, p) {
			h.path = ""
		}
	}
	return 0
}

// Symlink makes a symbolic link where the filesystem has them.
func (f *FS) Symlink(target, p string) int {
	if e := f.lock(true); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	p = clean(p)
	s, ok := f.w.(filesystem.Symlinker)
	if !ok {
		return -fuse.EPERM // as vfat answers symlink(2)
	}
	if err := s.Symlink(target, p); err != nil {
		return f.fail("symlink", p, err)
	}
	return 0
}

// Readlink reads a symbolic link.
func (f *FS) Readlink(p string) (int, string) {
	if e := f.lock(false); e != 0 {
		return e, ""
	}
	defer f.mu.Unlock()
	p = clean(p)
	t, err := f.ro.Readlink(p)
	if err != nil {
		return f.fail("readlink", p, err), ""
	}
	return 0, t
}

// sameName reports whether two paths name one entry (FAT and exFAT
// compare names without case: renaming "a" to "A" only respells it).
func (f *FS) sameName(a, b string) bool {
	if f.folds {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// key is p as the writers map knows it: one key for the spellings of a
// name that the filesystem takes for one.
func (f *FS) key(p string) string {
	if f.folds {
		return strings.ToUpper(p)
	}
	return p
}

// under reports whether p is dir or lies beneath it, and what follows
// dir in p ("" or "/...").
func (f *FS) under(p, dir string) (string, bool) {
	if len(p) < len(dir) || !f.sameName(p[:len(dir)], dir) {
		return "", false
	}
	rest := p[len(dir):]
	return rest, rest == "" || rest[0] == '/'
}

// Rename moves a file or directory, replacing a file (or an empty
// directory) at the target as rename(2) does.
func (f *FS) Rename(from, to string) int {
	if e := f.lock(true); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	from, to = clean(from), clean(to)
	if from == to {
		return 0
	}
	src, err := f.ro.Lstat(from)
	if err != nil {
		return f.fail("rename", from, err)
	}
	if dst, err := f.ro.Lstat(to); err == nil && !f.sameName(from, to) {
		switch {
		case src.IsDir() && !dst.IsDir():
			return -fuse.ENOTDIR
		case !src.IsDir() && dst.IsDir():
			return -fuse.EISDIR
		}
	}
	if src.IsDir() && strings.HasPrefix(to, from+"/") {
		return -fuse.EINVAL
	}
	// Open writers at or below from are closed (committing their
	// entries) before the entries move, and opened again at their new
	// names (where the filesystem cannot reopen a file, its open
	// WritableFile is kept: ext4's follows its inode).
	var moved []*writer
	for k, w := range f.writers {
		if _, ok := f.under(w.name, from); ok {
			if f.openW != nil {
				if err := w.wf.Close(); err != nil {
					return f.fail("rename", w.name, err)
				}
			}
			moved = append(moved, w)
			delete(f.writers, k)
		}
	}
	if !f.sameName(from, to) {
		delete(f.writers, f.key(to))
	}
	err = f.w.Rename(from, to)
	for _, w := range moved {
		if rest, _ := f.under(w.name, from); err == nil {
			w.name = to + rest
		}
		if f.openW != nil {
			wf, oerr := f.openW(w.name)
			if oerr != nil {
				f.logf("rename %s: reopening %s: %v", from, w.name, oerr)
				continue
			}
			w.wf = wf
		}
		f.writers[f.key(w.name)] = w
	}
	if err != nil {
		return f.fail("rename", from, err)
	}
	for _, h := range f.handles {
		if h.path == "" {
			continue
		}
		if rest, ok := f.under(h.path, from); ok {
			h.path = to + rest
		} else if f.sameName(h.path, to) {
			h.path = "" // replaced: its file is gone from the tree
		}
	}
	return 0
}

// Chmod changes permissions where the filesystem keeps them; FAT and
// exFAT have none, and chmod succeeds without effect there (as vfat's
// "quiet" option makes it), so that cp -p and editors do not fail.
func (f *FS) Chmod(p string, mode uint32) int {
	if e := f.lock(true); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	p = clean(p)
	c, ok := f.w.(filesystem.Chmoder)
	if !ok {
		if _, err := f.ro.Lstat(p); err != nil {
			return f.fail("chmod", p, err)
		}
		return 0
	}
	if err := c.Chmod(p, iofs.FileMode(mode&0o7777)); err != nil {
		return f.fail("chmod", p, err)
	}
	return 0
}

// Chown accepts only the owner every file is shown with.
func (f *FS) Chown(p string, uid, gid uint32) int {
	if uid != ^uint32(0) && uid != f.uid || gid != ^uint32(0) && gid != f.gid {
		return -fuse.EPERM
	}
	return 0
}

// Utimens sets the access and modification times (now when tmsp is nil).
func (f *FS) Utimens(p string, tmsp []fuse.Timespec) int {
	if e := f.lock(true); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	p = clean(p)
	atime, mtime := time.Now(), time.Now()
	if len(tmsp) == 2 {
		atime, mtime = tmsp[0].Time(), tmsp[1].Time()
	}
	// An open writer commits its entry first, so that its own update of
	// the times does not come after these.
	if w := f.writers[f.key(p)]; w != nil {
		if err := w.wf.Sync(); err != nil {
			return f.fail("utimens", p, err)
		}
	}
	if err := f.w.Chtimes(p, atime, mtime); err != nil {
		return f.fail("utimens", p, err)
	}
	return 0
}

// Access lets every request through: the files are the mounting user's.
func (f *FS) Access(p string, mask uint32) int { return 0 }

// writerLocked returns p's shared writer, opening it: truncated when
// trunc, else as it is (which needs filesystem.OpenWriter unless the
// file is empty).
func (f *FS) writerLocked(p string, trunc bool) (*writer, error) {
	if w := f.writers[f.key(p)]; w != nil {
		if trunc {
			if err := w.wf.Truncate(0); err != nil {
				return nil, err
			}
		}
		w.refs++
		return w, nil
	}
	var wf filesystem.WritableFile
	var err error
	if trunc {
		wf, err = f.w.Create(p)
	} else if f.openW != nil {
		wf, err = f.openW(p)
	} else {
		var fi iofs.FileInfo
		fi, err = f.ro.Lstat(p)
		if err == nil && fi.Size() > 0 {
			return nil, errNoOpenWrite
		}
		if err == nil {
			wf, err = f.w.Create(p)
		}
	}
	if err != nil {
		return nil, err
	}
	w := &writer{wf: wf, name: p, refs: 1}
	f.writers[f.key(p)] = w
	return w, nil
}

// errNoOpenWrite: the filesystem (ext2/3/4 here) can write a file only
// from the start; changing an existing one in place is not supported.
var errNoOpenWrite = errors.New("this filesystem cannot open an existing file for writing without truncating it")

func (f *FS) newHandleLocked(h *handle) uint64 {
	f.next++
	f.handles[f.next] = h
	return f.next
}

// Create makes (or truncates) a file and opens it.
func (f *FS) Create(p string, flags int, mode uint32) (int, uint64) {
	if e := f.lock(true); e != 0 {
		return e, ^uint64(0)
	}
	defer f.mu.Unlock()
	p = clean(p)
	fi, err := f.ro.Lstat(p)
	switch {
	case err == nil && flags&fuse.O_EXCL != 0:
		return -fuse.EEXIST, ^uint64(0)
	case err == nil && fi.IsDir():
		return -fuse.EISDIR, ^uint64(0)
	case err != nil && !errors.Is(err, iofs.ErrNotExist):
		return f.fail("create", p, err), ^uint64(0)
	}
	w, err := f.writerLocked(p, err != nil || flags&fuse.O_TRUNC != 0)
	if err != nil {
		return f.fail("create", p, err), ^uint64(0)
	}
	if c, ok := f.w.(filesystem.Chmoder); ok {
		if err := c.Chmod(p, iofs.FileMode(mode&0o7777)); err != nil {
			f.releaseLocked(p, w)
			return f.fail("chmod", p, err), ^uint64(0)
		}
	}
	return 0, f.newHandleLocked(&handle{path: p, w: w})
}

// Open opens a file.
func (f *FS) Open(p string, flags int) (int, uint64) {
	write := flags&fuse.O_ACCMODE != fuse.O_RDONLY || flags&fuse.O_TRUNC != 0
	if e := f.lock(write); e != 0 {
		return e, ^uint64(0)
	}
	defer f.mu.Unlock()
	p = clean(p)
	fi, err := f.ro.Lstat(p)
	if err != nil {
		return f.fail("open", p, err), ^uint64(0)
	}
	if fi.IsDir() {
		if write {
			return -fuse.EISDIR, ^uint64(0)
		}
		return 0, f.newHandleLocked(&handle{path: p, dir: true})
	}
	if write {
		w, err := f.writerLocked(p, flags&fuse.O_TRUNC != 0)
		if err == errNoOpenWrite {
			rf, err := f.ro.Open(p)
			if err != nil {
				return f.fail("open", p, err), ^uint64(0)
			}
			return 0, f.newHandleLocked(&handle{path: p, f: rf, old: true})
		}
		if err != nil {
			return f.fail("open", p, err), ^uint64(0)
		}
		return 0, f.newHandleLocked(&handle{path: p, w: w})
	}
	rf, err := f.ro.Open(p)
	if err != nil {
		return f.fail("open", p, err), ^uint64(0)
	}
	return 0, f.newHandleLocked(&handle{path: p, f: rf})
}

// Truncate changes a file's size, through its handle when given one.
func (f *FS) Truncate(p string, size int64, fh uint64) int {
	if e := f.lock(true); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	p = clean(p)
	h := f.handles[fh]
	if h != nil && h.w != nil {
		if err := h.w.wf.Truncate(size); err != nil {
			return f.fail("truncate", p, err)
		}
		return 0
	}
	if h != nil && h.old {
		if size != 0 {
			f.logf("truncate %s: %v", p, errNoOpenWrite)
			return -fuse.EOPNOTSUPP
		}
		w, err := f.writerLocked(h.path, true)
		if err != nil {
			return f.fail("truncate", p, err)
		}
		h.f.Close()
		h.f, h.w, h.old = nil, w, false
		return 0
	}
	fi, err := f.ro.Lstat(p)
	if err != nil {
		return f.fail("truncate", p, err)
	}
	if fi.IsDir() {
		return -fuse.EISDIR
	}
	w, err := f.writerLocked(p, size == 0)
	if err == errNoOpenWrite {
		f.logf("truncate %s: %v", p, err)
		return -fuse.EOPNOTSUPP
	}
	if err != nil {
		return f.fail("truncate", p, err)
	}
	err = w.wf.Truncate(size)
	if rerr := f.releaseLocked(p, w); err == nil {
		err = rerr
	}
	if err != nil {
		return f.fail("truncate", p, err)
	}
	return 0
}

// Read reads from an open file: through the file's writer when one is
// open anywhere, so that a reader sees what writers wrote.
func (f *FS) Read(p string, buff []byte, ofst int64, fh uint64) int {
	if e := f.lock(false); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	h := f.handles[fh]
	if h == nil || h.dir {
		return -fuse.EBADF
	}
	var r io.ReaderAt = h.f
	if h.w != nil {
		r = h.w.wf
	} else if w := f.writers[f.key(h.path)]; w != nil && h.path != "" {
		r = w.wf
	}
	n, err := r.ReadAt(buff, ofst)
	if err != nil && err != io.EOF {
		return f.fail("read", h.path, err)
	}
	return n
}

// Write writes to an open file.
func (f *FS) Write(p string, buff []byte, ofst int64, fh uint64) int {
	if e := f.lock(true); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	h := f.handles[fh]
	if h != nil && h.old {
		// Emptied since it was opened (the kernel's O_TRUNC by path):
		// it can be written from the start now.
		if fi, err := f.statLocked(h.path); err != nil || fi.Size() != 0 {
			f.logf("write %s: %v", h.path, errNoOpenWrite)
			return -fuse.EOPNOTSUPP
		}
		w, err := f.writerLocked(h.path, false)
		if err != nil {
			return f.fail("write", h.path, err)
		}
		h.f.Close()
		h.f, h.w, h.old = nil, w, false
	}
	if h == nil || h.w == nil {
		return -fuse.EBADF
	}
	n, err := h.w.wf.WriteAt(buff, ofst)
	if err != nil {
		return f.fail("write", h.path, err)
	}
	return n
}

// Flush is close(2) of one descriptor: the file's data and entry are
// committed, so that a failure (no space) is close's error.
func (f *FS) Flush(p string, fh uint64) int {
	if e := f.lock(false); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	if h := f.handles[fh]; h != nil && h.w != nil {
		if err := h.w.wf.Sync(); err != nil {
			return f.fail("flush", h.path, err)
		}
	}
	return 0
}

// Fsync makes a file's data and the filesystem durable.
func (f *FS) Fsync(p string, datasync bool, fh uint64) int {
	if e := f.lock(false); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	h := f.handles[fh]
	if h != nil && h.w != nil {
		if err := h.w.wf.Sync(); err != nil {
			return f.fail("fsync", h.path, err)
		}
	}
	if f.w != nil {
		if err := f.w.Sync(); err != nil {
			return f.fail("fsync", p, err)
		}
	}
	return 0
}

// Release closes a handle; the last handle of a writer closes the file.
func (f *FS) Release(p string, fh uint64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.handles[fh]
	if h == nil {
		return -fuse.EBADF
	}
	delete(f.handles, fh)
	var err error
	switch {
	case h.f != nil:
		err = h.f.Close()
	case h.w != nil:
		err = f.releaseLocked(h.path, h.w)
	}
	if err != nil {
		return f.fail("close", h.path, err)
	}
	return 0
}

// releaseLocked drops one reference to w, closing the file with the
// last one.
func (f *FS) releaseLocked(p string, w *writer) error {
	w.refs--
	if w.refs > 0 {
		return nil
	}
	if f.writers[f.key(w.name)] == w {
		delete(f.writers, f.key(w.name))
	} else {
		for k, v := range f.writers {
			if v == w {
				delete(f.writers, k)
			}
		}
	}
	return w.wf.Close()
}

// Opendir opens a directory.
func (f *FS) Opendir(p string) (int, uint64) {
	if e := f.lock(false); e != 0 {
		return e, ^uint64(0)
	}
	defer f.mu.Unlock()
	p = clean(p)
	fi, err := f.ro.Lstat(p)
	if err != nil {
		return f.fail("opendir", p, err), ^uint64(0)
	}
	if !fi.IsDir() {
		return -fuse.ENOTDIR, ^uint64(0)
	}
	return 0, f.newHandleLocked(&handle{path: p, dir: true})
}

// Readdir lists a directory, with each entry's attributes (WinFsp then
// needs no Getattr per entry).
func (f *FS) Readdir(p string, fill func(name string, st *fuse.Stat_t, ofst int64) bool, ofst int64, fh uint64) int {
	if e := f.lock(false); e != 0 {
		return e
	}
	defer f.mu.Unlock()
	p = clean(p)
	ents, err := f.ro.ReadDir(p)
	if err != nil && len(ents) == 0 {
		return f.fail("readdir", p, err)
	}
	if err != nil {
		// A directory with damaged entries lists its valid ones.
		f.logf("readdir %s: %v", p, err)
	}
	fill(".", nil, 0)
	fill("..", nil, 0)
	for _, e := range ents {
		var st *fuse.Stat_t
		if fi, err := f.statLocked(path.Join(p, e.Name())); err == nil {
			st = new(fuse.Stat_t)
			f.fill(fi, st)
		}
		if !fill(e.Name(), st, 0) {
			break
		}
	}
	return 0
}

// Releasedir closes a directory handle.
func (f *FS) Releasedir(p string, fh uint64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.handles, fh)
	return 0
}

// Fsyncdir makes the filesystem durable.
func (f *FS) Fsyncdir(p string, datasync bool, fh uint64) int {
	return f.Fsync(p, datasync, ^uint64(0))
}

// Close closes every file still open and then the filesystem; requests
// arriving later fail with EIO.
func (f *FS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	var first error
	for fh, h := range f.handles {
		if h.f != nil {
			h.f.Close()
		}
		delete(f.handles, fh)
	}
	for p, w := range f.writers {
		if err := w.wf.Close(); err != nil && first == nil {
			first = err
		}
		delete(f.writers, p)
	}
	if err := f.ro.Close(); err != nil && first == nil && !errors.Is(err, iofs.ErrClosed) {
		first = err
	}
	if errors.Is(first, volume.ErrProtected) {
		f.logf("closing: %v (writes after the protection triggered were refused)", first)
		first = nil
	}
	return first
}

var _ fuse.FileSystemInterface = (*FS)(nil)
