//go:build unix

package conformance

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
)

// DirWriter presents the host directory root (a front end's mount point)
// as a filesystem.Writer done with os calls, so that TestWrites runs
// through the kernel and the front end exactly as a user's programs do.
// Errno values become this package's sentinels (ENOSPC ErrNoSpace,
// ENAMETOOLONG and, for the calls that take a new name, EINVAL
// ErrInvalidName, ENOTEMPTY ErrNotEmpty, ...). Close calls unmount.
func DirWriter(root, typ string, unmount func() error) filesystem.Writer {
	return &dirWriter{root: root, typ: typ, unmount: unmount}
}

type dirWriter struct {
	root, typ string
	unmount   func() error
}

func (d *dirWriter) host(name string) string {
	return filepath.Join(d.root, filepath.FromSlash(filepath.Clean("/"+name)))
}

// errnoKinds are the sentinels for errno values (EINVAL only where a
// name is created).
var errnoKinds = map[syscall.Errno]error{
	syscall.ENOSPC:       filesystem.ErrNoSpace,
	syscall.EFBIG:        filesystem.ErrNoSpace,
	syscall.ENAMETOOLONG: filesystem.ErrInvalidName,
	syscall.ENOTEMPTY:    filesystem.ErrNotEmpty,
	syscall.ENOTDIR:      filesystem.ErrNotDir,
	syscall.EISDIR:       filesystem.ErrIsDir,
	syscall.EROFS:        filesystem.ErrReadOnly,
}

type kinded struct{ err, kind error }

func (e *kinded) Error() string   { return e.err.Error() }
func (e *kinded) Unwrap() []error { return []error{e.err, e.kind} }

func mapErrno(err error, naming bool) error {
	var en syscall.Errno
	if err == nil || !errors.As(err, &en) {
		return err
	}
	if k, ok := errnoKinds[en]; ok {
		return &kinded{err, k}
	}
	if en == syscall.EINVAL && naming {
		return &kinded{err, filesystem.ErrInvalidName}
	}
	return err
}

func (d *dirWriter) Type() string    { return d.typ }
func (d *dirWriter) Version() string { return "" }
func (d *dirWriter) Label() string   { return "" }
func (d *dirWriter) ID() string      { return "" }

func (d *dirWriter) Stat(name string) (fs.FileInfo, error) {
	fi, err := os.Stat(d.host(name))
	return fi, mapErrno(err, false)
}

func (d *dirWriter) Lstat(name string) (fs.FileInfo, error) {
	fi, err := os.Lstat(d.host(name))
	return fi, mapErrno(err, false)
}

func (d *dirWriter) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := os.ReadDir(d.host(name))
	return ents, mapErrno(err, false)
}

func (d *dirWriter) Open(name string) (filesystem.File, error) {
	f, err := os.Open(d.host(name))
	if err != nil {
		return nil, mapErrno(err, false)
	}
	return &hostFile{f}, nil
}

func (d *dirWriter) Readlink(name string) (string, error) {
	t, err := os.Readlink(d.host(name))
	return t, mapErrno(err, false)
}

func (d *dirWriter) Statfs() filesystem.Statfs {
	var st syscall.Statfs_t
	if err := syscall.Statfs(d.root, &st); err != nil {
		return filesystem.Statfs{}
	}
	bs := int64(st.Bsize)
	return filesystem.Statfs{BlockSize: int(st.Bsize), TotalBytes: int64(st.Blocks) * bs,
		FreeBytes: int64(st.Bfree) * bs, AvailBytes: int64(st.Bavail) * bs}
}

func (d *dirWriter) Close() error { return d.unmount() }

func (d *dirWriter) Create(name string) (filesystem.WritableFile, error) {
	f, err := os.Create(d.host(name))
	if err != nil {
		return nil, mapErrno(err, true)
	}
	return &hostFile{f}, nil
}

func (d *dirWriter) Mkdir(name string) error {
	return mapErrno(os.Mkdir(d.host(name), 0o755), true)
}

func (d *dirWriter) Remove(name string) error { return mapErrno(os.Remove(d.host(name)), false) }

// Rename is rename(2) itself: os.Rename refuses on its own to replace a
// directory, which rename(2) (and the suite) allows when it is empty.
func (d *dirWriter) Rename(oldpath, newpath string) error {
	from, to := d.host(oldpath), d.host(newpath)
	if err := syscall.Rename(from, to); err != nil {
		return mapErrno(&os.LinkError{Op: "rename", Old: from, New: to, Err: err}, true)
	}
	return nil
}

func (d *dirWriter) Chtimes(name string, atime, mtime time.Time) error {
	return mapErrno(os.Chtimes(d.host(name), atime, mtime), false)
}

// Sync has nothing to flush at this level: Close (unmount) does it.
func (d *dirWriter) Sync() error { return nil }

// hostFile is an open host file with errno mapped.
type hostFile struct{ *os.File }

func (f *hostFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	return n, mapErrno(err, false)
}

func (f *hostFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	return n, mapErrno(err, false)
}

func (f *hostFile) Truncate(size int64) error { return mapErrno(f.File.Truncate(size), false) }
func (f *hostFile) Sync() error               { return mapErrno(f.File.Sync(), false) }
func (f *hostFile) Close() error              { return mapErrno(f.File.Close(), false) }
