//go:build linux || darwin

package mount

import (
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cryptvol/cryptvol/volume"
)

// MountFiles serves the FAT or exFAT filesystem inside v at dir. It opens
// the filesystem itself (errors wrap ErrNotFiles when there is neither);
// Wait, Unmount and Shutdown close it again. The volume stays open.
func MountFiles(dir string, v Volume, o Options) (*Mount, error) {
	ffs, err := openTree(v, o.ReadOnly)
	if err != nil {
		return nil, err
	}
	files := newFilesFS(ffs, o)
	m, err := serve(dir, &dirNode{fsys: files}, o, files.close)
	if err != nil {
		ffs.Close()
		return nil, err
	}
	return m, nil
}

// filesFS is the state shared by every node of a files mount.
type filesFS struct {
	tree     filesTree
	readOnly bool
	uid, gid uint32
	blksize  uint32
	log      func(format string, args ...any)
	wb       *writeBehind
	mounted  time.Time // shown as the root directory's times (FAT has none)
	// gen counts changes, for the read-ahead windows (see readAhead).
	gen     atomic.Uint64
	windows *sync.Pool

	protectedOnce sync.Once
}

func newFilesFS(ffs filesTree, o Options) *filesFS {
	uid, gid := owner(o)
	return &filesFS{
		tree:     ffs,
		readOnly: o.ReadOnly,
		uid:      uid,
		gid:      gid,
		// st_blksize is what cp, stdio and friends size their buffers
		// by: large enough that they write in big requests.
		blksize: 128 << 10,
		log:     o.logf,
		wb:      newWriteBehind(newKicker(o.Container)),
		windows: newWindowPool(),
		mounted: time.Now(),
	}
}

// changed records that file data or sizes changed (after the change is
// applied or queued), making read-ahead windows stale.
func (f *filesFS) changed() { f.gen.Add(1) }

// newHandle wraps an open file, with read-ahead for readable ones.
func (f *filesFS) newHandle(ff filesFile, readable bool) *handle {
	h := &handle{f: ff}
	if readable {
		h.ra = &readAhead{r: ff, gen: &f.gen, barrier: f.wb.barrier, pool: f.windows}
	}
	return h
}

// owner is the uid and gid every file is shown with.
func owner(o Options) (uint32, uint32) {
	uid, gid := os.Getuid(), os.Getgid()
	if o.UID > 0 {
		uid = o.UID
	}
	if o.GID > 0 {
		gid = o.GID
	}
	return uint32(uid), uint32(gid)
}

// close flushes and closes the filesystem: open files are committed as
// they are. Requests arriving later fail with EIO.
func (f *filesFS) close() error {
	f.wb.close()
	err := f.tree.Close()
	switch {
	case errors.Is(err, iofs.ErrClosed):
		err = nil
	case errors.Is(err, volume.ErrProtected):
		// Hidden-volume protection stopped all writes: what was written
		// before is intact, and the refused writes failed loudly then.
		f.log("closing: %v (writes after the protection triggered were refused)", err)
		err = nil
	}
	return err
}

// fail turns an error into an errno, noting the first time hidden-volume
// protection refuses a write.
func (f *filesFS) fail(op, name string, err error) syscall.Errno {
	if errors.Is(err, iofs.ErrClosed) {
		return syscall.EIO // unmounted under a program still using it
	}
	if errors.Is(err, volume.ErrProtected) {
		f.protectedOnce.Do(func() {
			f.log("%s %s: %v; the filesystem refuses every write from now on (data written before is intact)", op, name, err)
		})
	} else if e := errno(err); e == syscall.EIO {
		f.log("%s %s: %v", op, name, err)
	}
	return errno(err)
}

// fillAttr describes a FAT entry the way stat(2) does.
func (f *filesFS) fillAttr(fi iofs.FileInfo, out *fuse.Attr) {
	mode := uint32(0o755)
	if fi.IsDir() {
		mode |= syscall.S_IFDIR
		// 1 means "unknown" to tools (find) that would otherwise derive
		// the number of subdirectories from it.
		out.Nlink = 1
	} else {
		mode = syscall.S_IFREG | 0o644
		out.Nlink = 1
	}
	if fi.Mode().Perm()&0o200 == 0 || f.readOnly {
		mode &^= 0o222
	}
	out.Mode = mode
	size := uint64(fi.Size())
	out.Size = size
	unit, _, _ := f.tree.Space()
	cs := uint64(unit)
	out.Blocks = (size + cs - 1) / cs * cs / 512
	out.Blksize = f.blksize
	out.Owner = fuse.Owner{Uid: f.uid, Gid: f.gid}
	mtime := fi.ModTime()
	if mtime.IsZero() {
		mtime = f.mounted
	}
	atime := mtime
	if ff, ok := fi.(interface{ AccessTime() time.Time }); ok && !ff.AccessTime().IsZero() && ff.AccessTime().After(mtime) {
		atime = ff.AccessTime()
	}
	// FAT has no inode change time; the modification time stands in.
	out.SetTimes(&atime, &mtime, &mtime)
}

// dirNode is a directory of a files mount (the root included); fileNode a
// regular file. Both find their FAT path from their place in go-fuse's
// tree of inodes, which go-fuse keeps in step with lookups and renames.
type dirNode struct {
	fs.Inode
	fsys *filesFS
}

type fileNode struct {
	fs.Inode
	fsys *filesFS
}

func fatPath(n *fs.Inode) string { return "/" + n.Path(nil) }

var (
	_ fs.NodeLookuper  = (*dirNode)(nil)
	_ fs.NodeReaddirer = (*dirNode)(nil)
	_ fs.NodeMkdirer   = (*dirNode)(nil)
	_ fs.NodeCreater   = (*dirNode)(nil)
	_ fs.NodeUnlinker  = (*dirNode)(nil)
	_ fs.NodeRmdirer   = (*dirNode)(nil)
	_ fs.NodeRenamer   = (*dirNode)(nil)
	_ fs.NodeGetattrer = (*dirNode)(nil)
	_ fs.NodeSetattrer = (*dirNode)(nil)
	_ fs.NodeStatfser  = (*dirNode)(nil)
	_ fs.NodeFsyncer   = (*dirNode)(nil)

	_ fs.NodeOpener    = (*fileNode)(nil)
	_ fs.NodeGetattrer = (*fileNode)(nil)
	_ fs.NodeSetattrer = (*fileNode)(nil)
	_ fs.NodeReader    = (*fileNode)(nil)
	_ fs.NodeWriter    = (*fileNode)(nil)
	_ fs.NodeFsyncer   = (*fileNode)(nil)
	_ fs.NodeReleaser  = (*fileNode)(nil)
	_ fs.NodeFlusher   = (*fileNode)(nil)
	_ fs.NodeStatfser  = (*fileNode)(nil)
)

// child makes the inode for a FAT entry found under name.
func (n *dirNode) child(ctx context.Context, fi iofs.FileInfo, out *fuse.EntryOut) *fs.Inode {
	n.fsys.fillAttr(fi, &out.Attr)
	if fi.IsDir() {
		return n.NewInode(ctx, &dirNode{fsys: n.fsys}, fs.StableAttr{Mode: syscall.S_IFDIR})
	}
	return n.NewInode(ctx, &fileNode{fsys: n.fsys}, fs.StableAttr{Mode: syscall.S_IFREG})
}

// Lookup finds a name in the directory (case-insensitively, as FAT does).
func (n *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.fsys.wb.barrier()
	p := path.Join(fatPath(&n.Inode), name)
	fi, err := n.fsys.tree.Stat(p)
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return nil, syscall.ENOENT
		}
		return nil, n.fsys.fail("lookup", p, err)
	}
	return n.child(ctx, fi, out), 0
}

// Readdir lists the directory.
func (n *dirNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	n.fsys.wb.barrier()
	p := fatPath(&n.Inode)
	ents, err := n.fsys.tree.ReadDir(p)
	if err != nil && len(ents) == 0 {
		return nil, n.fsys.fail("readdir", p, err)
	}
	if err != nil {
		// A directory with damaged entries lists its valid ones.
		n.fsys.log("readdir %s: %v", p, err)
	}
	list := make([]fuse.DirEntry, 0, len(ents))
	for _, e := range ents {
		mode := uint32(syscall.S_IFREG)
		if e.IsDir() {
			mode = syscall.S_IFDIR
		}
		list = append(list, fuse.DirEntry{Name: e.Name(), Mode: mode})
	}
	return fs.NewListDirStream(list), 0
}

// Getattr describes the directory.
func (n *dirNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.fsys.wb.barrier()
	p := fatPath(&n.Inode)
	fi, err := n.fsys.tree.Stat(p)
	if err != nil {
		return n.fsys.fail("stat", p, err)
	}
	n.fsys.fillAttr(fi, &out.Attr)
	return 0
}

// Setattr changes a directory's times and read-only bit.
func (n *dirNode) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	n.fsys.wb.barrier()
	if _, ok := in.GetSize(); ok {
		return syscall.EISDIR
	}
	return setattr(n.fsys, fatPath(&n.Inode), nil, in, out)
}

// Mkdir makes a directory.
func (n *dirNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	n.fsys.wb.barrier()
	p := path.Join(fatPath(&n.Inode), name)
	if err := n.fsys.tree.Mkdir(p); err != nil {
		return nil, n.fsys.fail("mkdir", p, err)
	}
	fi, err := n.fsys.tree.Stat(p)
	if err != nil {
		return nil, n.fsys.fail("stat", p, err)
	}
	return n.child(ctx, fi, out), 0
}

// Create makes (or, without O_EXCL, opens) a file and opens it.
func (n *dirNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	n.fsys.wb.barrier()
	p := path.Join(fatPath(&n.Inode), name)
	of := os.O_RDWR | os.O_CREATE | int(flags)&(os.O_EXCL|os.O_TRUNC)
	f, err := n.fsys.tree.OpenFile(p, of, iofs.FileMode(mode).Perm())
	if err != nil {
		return nil, nil, 0, n.fsys.fail("create", p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, 0, n.fsys.fail("stat", p, err)
	}
	n.fsys.changed()
	readable := int(flags)&syscall.O_ACCMODE != syscall.O_WRONLY
	return n.child(ctx, fi, out), n.fsys.newHandle(f, readable), openFlags(flags), 0
}

// Unlink removes a file.
func (n *dirNode) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.remove(name, false)
}

// Rmdir removes an empty directory.
func (n *dirNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.remove(name, true)
}

func (n *dirNode) remove(name string, dir bool) syscall.Errno {
	n.fsys.wb.barrier()
	p := path.Join(fatPath(&n.Inode), name)
	fi, err := n.fsys.tree.Stat(p)
	if err != nil {
		return n.fsys.fail("remove", p, err)
	}
	switch {
	case dir && !fi.IsDir():
		return syscall.ENOTDIR
	case !dir && fi.IsDir():
		return syscall.EISDIR
	}
	if err := n.fsys.tree.Remove(p); err != nil {
		return n.fsys.fail("remove", p, err)
	}
	n.fsys.changed()
	return 0
}

// renameNoReplace and renameExchange are renameat2's flags.
const (
	renameNoReplace = 1
	renameExchange  = 2
)

// Rename moves a file or directory, replacing an existing file (or empty
// directory) at the target as rename(2) does. RENAME_EXCHANGE has no
// FAT equivalent.
func (n *dirNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	n.fsys.wb.barrier()
	if flags&renameExchange != 0 {
		return syscall.EINVAL
	}
	from := path.Join(fatPath(&n.Inode), name)
	to := path.Join(fatPath(newParent.EmbeddedInode()), newName)
	if flags&renameNoReplace != 0 {
		if _, err := n.fsys.tree.Stat(to); err == nil && !sameName(from, to) {
			return syscall.EEXIST
		}
	}
	src, err := n.fsys.tree.Stat(from)
	if err != nil {
		return n.fsys.fail("rename", from, err)
	}
	if dst, err := n.fsys.tree.Stat(to); err == nil && !sameName(from, to) {
		switch {
		case src.IsDir() && !dst.IsDir():
			return syscall.ENOTDIR
		case !src.IsDir() && dst.IsDir():
			return syscall.EISDIR
		}
	}
	if err := n.fsys.tree.Rename(from, to); err != nil {
		return n.fsys.fail("rename", from, err)
	}
	n.fsys.changed()
	return 0
}

// sameName reports whether two paths name the same FAT entry (FAT compares
// names case-insensitively, so renaming "a" to "A" only respells it).
func sameName(a, b string) bool {
	return foldASCII(a) == foldASCII(b)
}

func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// Statfs reports the filesystem's size and free space.
func (n *dirNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	n.fsys.wb.barrier()
	n.fsys.statfs(out)
	return 0
}

// Fsync on a directory flushes the whole filesystem.
func (n *dirNode) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	n.fsys.wb.barrier()
	if n.fsys.readOnly {
		return 0
	}
	if err := n.fsys.tree.Sync(); err != nil {
		return n.fsys.fail("fsync", fatPath(&n.Inode), err)
	}
	return 0
}

func (f *filesFS) statfs(out *fuse.StatfsOut) {
	unit, total, free := f.tree.Space()
	out.Bsize = uint32(unit)
	out.Frsize = uint32(unit)
	out.Blocks = total
	out.Bfree = free
	out.Bavail = free
	out.NameLen = 255
}

// handle is one open file. Errors of its queued writes wait in it.
type handle struct {
	f  filesFile
	ra *readAhead // nil for write-only handles
	deferredError
}

// WriteAt applies a queued write.
func (h *handle) WriteAt(p []byte, off int64) (int, error) { return h.f.WriteAt(p, off) }

// Open opens the file. A write-only open is made read-write so the kernel
// may read through it too; O_APPEND is left to the kernel, which sends
// every write with its offset.
func (n *fileNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	n.fsys.wb.barrier()
	p := fatPath(&n.Inode)
	of := os.O_RDONLY
	if int(flags)&(os.O_WRONLY|os.O_RDWR) != 0 {
		of = os.O_RDWR
	}
	of |= int(flags) & os.O_TRUNC
	f, err := n.fsys.tree.OpenFile(p, of, 0)
	if err != nil {
		return nil, 0, n.fsys.fail("open", p, err)
	}
	if of&os.O_TRUNC != 0 {
		n.fsys.changed()
	}
	return n.fsys.newHandle(f, of&os.O_RDWR != 0 || of == os.O_RDONLY), openFlags(flags), 0
}

// Getattr describes the file, through the open handle if there is one.
func (n *fileNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.fsys.wb.barrier()
	var fi iofs.FileInfo
	var err error
	if h, ok := fh.(*handle); ok {
		fi, err = h.f.Stat()
	} else {
		fi, err = n.fsys.tree.Stat(fatPath(&n.Inode))
	}
	if err != nil {
		return n.fsys.fail("stat", fatPath(&n.Inode), err)
	}
	n.fsys.fillAttr(fi, &out.Attr)
	return 0
}

// Setattr truncates, sets times and the read-only bit.
func (n *fileNode) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	n.fsys.wb.barrier()
	h, _ := fh.(*handle)
	return setattr(n.fsys, fatPath(&n.Inode), h, in, out)
}

func setattr(fsys *filesFS, p string, h *handle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if uid, ok := in.GetUID(); ok && uid != fsys.uid {
		return syscall.EPERM
	}
	if gid, ok := in.GetGID(); ok && gid != fsys.gid {
		return syscall.EPERM
	}
	if size, ok := in.GetSize(); ok {
		if err := truncate(fsys, p, h, int64(size)); err != nil {
			return fsys.fail("truncate", p, err)
		}
	}
	mtime, mok := in.GetMTime()
	atime, aok := in.GetATime()
	if mok || aok {
		if !mok {
			mtime = time.Time{}
		}
		if !aok {
			atime = time.Time{}
		}
		if err := fsys.tree.Chtimes(p, atime, mtime); err != nil {
			return fsys.fail("chtimes", p, err)
		}
	}
	if mode, ok := in.GetMode(); ok {
		if err := fsys.tree.SetReadOnly(p, mode&0o222 == 0); err != nil {
			return fsys.fail("chmod", p, err)
		}
	}
	fsys.changed()
	var fi iofs.FileInfo
	var err error
	if h != nil {
		fi, err = h.f.Stat()
	} else {
		fi, err = fsys.tree.Stat(p)
	}
	if err != nil {
		return fsys.fail("stat", p, err)
	}
	fsys.fillAttr(fi, &out.Attr)
	return 0
}

func truncate(fsys *filesFS, p string, h *handle, size int64) error {
	if h != nil {
		return h.f.Truncate(size)
	}
	f, err := fsys.tree.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Read reads straight into the kernel's request buffer.
func (n *fileNode) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n.fsys.wb.barrier()
	h, ok := fh.(*handle)
	if !ok {
		return nil, syscall.EBADF
	}
	var k int
	var err error
	if h.ra != nil {
		k, err = h.ra.read(dest, off)
	} else {
		k, err = h.f.ReadAt(dest, off)
	}
	if err != nil && k == 0 && !isEOF(err) {
		return nil, n.fsys.fail("read", h.f.Name(), err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

// Write queues the request's data (see writeBehind) and returns at once;
// an error of an earlier queued write of this handle is returned instead.
func (n *fileNode) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	h, ok := fh.(*handle)
	if !ok {
		return 0, syscall.EBADF
	}
	if err := h.takeError(); err != nil {
		return 0, n.fsys.fail("write", h.f.Name(), err)
	}
	if !n.fsys.wb.write(h, data, off) {
		return 0, syscall.EIO // unmounting
	}
	n.fsys.changed()
	return uint32(len(data)), 0
}

// Flush, at every close(2), returns the error of a queued write.
func (n *fileNode) Flush(ctx context.Context, fh fs.FileHandle) syscall.Errno {
	h, ok := fh.(*handle)
	if !ok {
		return 0
	}
	n.fsys.wb.barrier()
	if err := h.takeError(); err != nil {
		return n.fsys.fail("write", h.f.Name(), err)
	}
	return 0
}

// Fsync applies the queued writes, commits the file's directory entry and
// syncs the container.
func (n *fileNode) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	n.fsys.wb.barrier()
	h, ok := fh.(*handle)
	if !ok {
		return n.fsys.Fsync()
	}
	if err := h.takeError(); err != nil {
		return n.fsys.fail("write", h.f.Name(), err)
	}
	if err := h.f.Sync(); err != nil {
		return n.fsys.fail("fsync", h.f.Name(), err)
	}
	return 0
}

// Fsync flushes the whole filesystem.
func (f *filesFS) Fsync() syscall.Errno {
	f.wb.barrier()
	if f.readOnly {
		return 0
	}
	if err := f.tree.Sync(); err != nil {
		return f.fail("fsync", "/", err)
	}
	return 0
}

// Release closes the handle, committing the file's entry (without a
// device sync: that is fsync's job).
func (n *fileNode) Release(ctx context.Context, fh fs.FileHandle) syscall.Errno {
	h, ok := fh.(*handle)
	if !ok {
		return 0
	}
	n.fsys.wb.barrier()
	if h.ra != nil {
		h.ra.close()
	}
	if err := h.takeError(); err != nil {
		n.fsys.fail("write", h.f.Name(), err) // nobody is left to tell
	}
	if err := h.f.Close(); err != nil && !errors.Is(err, iofs.ErrClosed) {
		return n.fsys.fail("close", h.f.Name(), err)
	}
	return 0
}

// Statfs reports the filesystem's size and free space.
func (n *fileNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	n.fsys.wb.barrier()
	n.fsys.statfs(out)
	return 0
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// openFlags are the FUSE open flags for a file opened with flags. A
// write-only handle bypasses the kernel's page cache (FOPEN_DIRECT_IO):
// nothing can read or map its pages through it, and skipping the cache
// saves copying every byte once more and lets each write(2) go straight
// into the write-behind queue. The kernel drops cached pages that such a
// write overwrites, so other handles still read what was written. Handles
// that can read keep the page cache (read-ahead, mmap).
func openFlags(flags uint32) uint32 {
	if int(flags)&syscall.O_ACCMODE == syscall.O_WRONLY {
		return fuse.FOPEN_DIRECT_IO
	}
	return 0
}
