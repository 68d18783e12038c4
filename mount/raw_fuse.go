//go:build linux || darwin

package mount

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cryptvol/cryptvol/volume"
)

// MountRaw serves the decrypted data area of v at dir as one file, dir/volume
// (RawFileName), of v.Size() bytes. Writes go straight to the volume, so
// any filesystem can be put on it (mkfs.ext4 dir/volume) and loop-mounted.
func MountRaw(dir string, v Volume, o Options) (*Mount, error) {
	uid, gid := owner(o)
	r := &rawFile{v: v, readOnly: o.ReadOnly, uid: uid, gid: gid, log: o.logf, mounted: time.Now(), wb: newWriteBehind(newKicker(o.Container))}
	root := &rawRoot{file: r}
	m, err := serve(dir, root, o, r.close)
	if err != nil {
		return nil, err
	}
	m.opens = r.OpenCount
	return m, nil
}

// rawRoot is the mount's directory: it holds only the volume file.
type rawRoot struct {
	fs.Inode
	file *rawFile
}

var (
	_ fs.NodeOnAdder   = (*rawRoot)(nil)
	_ fs.NodeGetattrer = (*rawRoot)(nil)
	_ fs.NodeStatfser  = (*rawRoot)(nil)
)

// OnAdd puts the one file in place.
func (r *rawRoot) OnAdd(ctx context.Context) {
	ch := r.NewPersistentInode(ctx, r.file, fs.StableAttr{Mode: syscall.S_IFREG})
	r.AddChild(RawFileName, ch, false)
}

// Getattr describes the directory.
func (r *rawRoot) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFDIR | 0o700
	if r.file.readOnly {
		out.Mode = syscall.S_IFDIR | 0o500
	}
	out.Nlink = 2
	out.Owner = fuse.Owner{Uid: r.file.uid, Gid: r.file.gid}
	t := r.file.mounted
	out.SetTimes(&t, &t, &t)
	return 0
}

// Statfs reports the volume file's size.
func (r *rawRoot) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	return r.file.Statfs(ctx, out)
}

// rawFile is the decrypted data area.
type rawFile struct {
	fs.Inode
	v        Volume
	readOnly bool
	uid, gid uint32
	log      func(format string, args ...any)
	mounted  time.Time
	wb       *writeBehind
	deferredError

	mu       sync.Mutex
	modified time.Time
	// opens counts open handles (a loop device holds one).
	opens         atomic.Int32
	closed        atomic.Bool
	protectedOnce sync.Once
}

var (
	_ fs.NodeGetattrer = (*rawFile)(nil)
	_ fs.NodeSetattrer = (*rawFile)(nil)
	_ fs.NodeOpener    = (*rawFile)(nil)
	_ fs.NodeReader    = (*rawFile)(nil)
	_ fs.NodeWriter    = (*rawFile)(nil)
	_ fs.NodeFsyncer   = (*rawFile)(nil)
	_ fs.NodeReleaser  = (*rawFile)(nil)
	_ fs.NodeFlusher   = (*rawFile)(nil)
	_ fs.NodeStatfser  = (*rawFile)(nil)
)

// close flushes the volume; later requests fail.
func (r *rawFile) close() error {
	r.closed.Store(true)
	r.wb.close()
	if err := r.takeError(); err != nil {
		r.log("write: %v", err)
	}
	if r.readOnly {
		return nil
	}
	return r.v.Sync()
}

// WriteAt applies a queued write.
func (r *rawFile) WriteAt(p []byte, off int64) (int, error) {
	k, err := r.v.WriteAt(p, off)
	if err == nil {
		r.mu.Lock()
		r.modified = time.Now()
		r.mu.Unlock()
	}
	return k, err
}

func (r *rawFile) fail(op string, err error) syscall.Errno {
	if errors.Is(err, volume.ErrProtected) {
		r.protectedOnce.Do(func() { r.log("%s: %v", op, err) })
	} else if errno(err) == syscall.EIO {
		r.log("%s: %v", op, err)
	}
	return errno(err)
}

// Getattr describes the file: fixed size, times of the mount and of the
// last write.
func (r *rawFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	r.wb.barrier()
	r.fill(&out.Attr)
	return 0
}

func (r *rawFile) fill(out *fuse.Attr) {
	out.Mode = syscall.S_IFREG | 0o600
	if r.readOnly {
		out.Mode = syscall.S_IFREG | 0o400
	}
	out.Nlink = 1
	size := uint64(r.v.Size())
	out.Size = size
	out.Blocks = (size + 511) / 512
	out.Blksize = MaxIO
	out.Owner = fuse.Owner{Uid: r.uid, Gid: r.gid}
	r.mu.Lock()
	m := r.modified
	r.mu.Unlock()
	if m.IsZero() {
		m = r.mounted
	}
	a := r.mounted
	out.SetTimes(&a, &m, &m)
}

// Setattr accepts only what changes nothing: the size is the volume's.
func (r *rawFile) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok && int64(size) != r.v.Size() {
		return syscall.EPERM
	}
	if mt, ok := in.GetMTime(); ok {
		r.mu.Lock()
		r.modified = mt
		r.mu.Unlock()
	}
	r.fill(&out.Attr)
	return 0
}

// Open needs no handle: every read and write is positioned.
func (r *rawFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if r.closed.Load() {
		return nil, 0, syscall.EIO
	}
	if r.readOnly && flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EROFS
	}
	r.opens.Add(1)
	return nil, 0, 0
}

// Release drops an open.
func (r *rawFile) Release(ctx context.Context, fh fs.FileHandle) syscall.Errno {
	r.opens.Add(-1)
	return 0
}

// OpenCount is the number of open handles on the file.
func (r *rawFile) OpenCount() int { return int(r.opens.Load()) }

// Read decrypts straight into the kernel's request buffer.
func (r *rawFile) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if r.closed.Load() {
		return nil, syscall.EIO
	}
	r.wb.barrier()
	k, err := r.v.ReadAt(dest, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, r.fail("read", err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

// Write queues the data (see writeBehind); nothing beyond the end of the
// volume. An error of an earlier queued write is returned instead.
func (r *rawFile) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if r.closed.Load() {
		return 0, syscall.EIO
	}
	if r.readOnly {
		return 0, syscall.EROFS
	}
	if err := r.takeError(); err != nil {
		return 0, r.fail("write", err)
	}
	if off >= r.v.Size() {
		return 0, syscall.ENOSPC
	}
	if rest := r.v.Size() - off; int64(len(data)) > rest {
		data = data[:rest]
	}
	if !r.wb.write(r, data, off) {
		return 0, syscall.EIO
	}
	return uint32(len(data)), 0
}

// Flush, at every close(2), returns the error of a queued write.
func (r *rawFile) Flush(ctx context.Context, fh fs.FileHandle) syscall.Errno {
	r.wb.barrier()
	if err := r.takeError(); err != nil {
		return r.fail("write", err)
	}
	return 0
}

// Fsync applies the queued writes and syncs the container.
func (r *rawFile) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	r.wb.barrier()
	if err := r.takeError(); err != nil {
		return r.fail("write", err)
	}
	if r.readOnly {
		return 0
	}
	if err := r.v.Sync(); err != nil {
		return r.fail("fsync", err)
	}
	return 0
}

// Statfs reports the volume as full: the file cannot grow.
func (r *rawFile) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Bsize = 4096
	out.Frsize = 4096
	out.Blocks = uint64(r.v.Size()) / 4096
	out.NameLen = 255
	return 0
}
