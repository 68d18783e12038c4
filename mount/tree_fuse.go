//go:build linux || darwin

package mount

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
)

// ErrNotFiles means the volume holds no filesystem a files mount serves
// (FAT and exFAT, written in process); the error says what is there.
var ErrNotFiles = errors.New("no filesystem served as files")

// filesTree is what a files mount serves: a filesystem of the one
// filesystem layer (filesystem.FS, and its Writer when writable).
type filesTree interface {
	Stat(name string) (iofs.FileInfo, error)
	ReadDir(name string) ([]iofs.DirEntry, error)
	OpenFile(name string, flag int, perm iofs.FileMode) (filesFile, error)
	Mkdir(name string) error
	Remove(name string) error
	Rename(oldpath, newpath string) error
	Chtimes(name string, atime, mtime time.Time) error
	// SetReadOnly sets or clears the read-only attribute.
	SetReadOnly(name string, readOnly bool) error
	// Space is the allocation unit and the numbers of units in all and
	// free.
	Space() (unit int, total, free uint64)
	Sync() error
	Close() error
}

// filesFile is an open file of a filesTree.
type filesFile interface {
	io.ReaderAt
	io.WriterAt
	Stat() (iofs.FileInfo, error)
	Truncate(size int64) error
	Sync() error
	Close() error
	Name() string
}

// servedAsFiles are the filesystems a files mount serves: the ones whose
// writers keep every POSIX promise the mount makes (ext2/3/4 and NTFS go
// through their drivers, see driver.go).
var servedAsFiles = map[string]bool{"vfat": true, "exfat": true}

// openTree opens the FAT or exFAT filesystem in v. Errors wrap
// ErrNotFiles when neither is there.
func openTree(v Volume, readOnly bool) (filesTree, error) {
	fsys, err := filesystem.Open(v, v.Size(), filesystem.Options{Writable: !readOnly})
	switch {
	case errors.Is(err, filesystem.ErrUnknown):
		return nil, fmt.Errorf("%w: %v", ErrNotFiles, err)
	case err != nil:
		return nil, err
	case !servedAsFiles[fsys.Type()]:
		fsys.Close()
		return nil, fmt.Errorf("%w: %s", ErrNotFiles, fsys.Type())
	}
	t := &layerTree{fs: fsys}
	if !readOnly {
		w, ok := fsys.(filesystem.Writer)
		if !ok {
			fsys.Close()
			return nil, fmt.Errorf("%s: %w", fsys.Type(), filesystem.ErrReadOnly)
		}
		t.w = w
	}
	return t, nil
}

// layerTree is a filesTree over the filesystem layer.
type layerTree struct {
	fs filesystem.FS
	w  filesystem.Writer // nil when mounted read-only
}

func (t *layerTree) writer() (filesystem.Writer, error) {
	if t.w == nil {
		return nil, filesystem.ErrReadOnly
	}
	return t.w, nil
}

func (t *layerTree) Stat(name string) (iofs.FileInfo, error)      { return t.fs.Stat(name) }
func (t *layerTree) ReadDir(name string) ([]iofs.DirEntry, error) { return t.fs.ReadDir(name) }

// OpenFile opens name as os.OpenFile would: read-only through the reader,
// else an existing file through filesystem.OpenWriter (truncated for
// O_TRUNC) or a new one through Create (O_CREATE; read-only from the
// start when perm has no write bits, as FAT's attribute says).
func (t *layerTree) OpenFile(name string, flag int, perm iofs.FileMode) (filesFile, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC) == 0 {
		f, err := t.fs.Open(name)
		if err != nil {
			return nil, err
		}
		return &readFile{File: f, name: name}, nil
	}
	w, err := t.writer()
	if err != nil {
		return nil, &iofs.PathError{Op: "open", Path: name, Err: err}
	}
	_, serr := w.Lstat(name)
	exists := serr == nil
	switch {
	case serr != nil && !errors.Is(serr, iofs.ErrNotExist):
		return nil, serr
	case exists && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, &iofs.PathError{Op: "open", Path: name, Err: iofs.ErrExist}
	case !exists && flag&os.O_CREATE == 0:
		return nil, &iofs.PathError{Op: "open", Path: name, Err: iofs.ErrNotExist}
	case !exists:
		f, err := w.Create(name)
		if err != nil {
			return nil, err
		}
		if perm != 0 && perm&0o222 == 0 {
			if err := t.SetReadOnly(name, true); err != nil {
				f.Close()
				return nil, err
			}
		}
		return &writeFile{WritableFile: f, name: name}, nil
	}
	ow, ok := w.(filesystem.OpenWriter)
	if !ok {
		return nil, &iofs.PathError{Op: "open", Path: name, Err: filesystem.ErrUnsupported}
	}
	f, err := ow.OpenWrite(name)
	if err != nil {
		return nil, err
	}
	if flag&os.O_TRUNC != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return &writeFile{WritableFile: f, name: name}, nil
}

func (t *layerTree) Mkdir(name string) error {
	w, err := t.writer()
	if err != nil {
		return err
	}
	return w.Mkdir(name)
}

func (t *layerTree) Remove(name string) error {
	w, err := t.writer()
	if err != nil {
		return err
	}
	return w.Remove(name)
}

func (t *layerTree) Rename(oldpath, newpath string) error {
	w, err := t.writer()
	if err != nil {
		return err
	}
	return w.Rename(oldpath, newpath)
}

func (t *layerTree) Chtimes(name string, atime, mtime time.Time) error {
	w, err := t.writer()
	if err != nil {
		return err
	}
	return w.Chtimes(name, atime, mtime)
}

func (t *layerTree) SetReadOnly(name string, readOnly bool) error {
	w, err := t.writer()
	if err != nil {
		return err
	}
	a, ok := w.(filesystem.Attributer)
	if !ok {
		return filesystem.ErrUnsupported
	}
	return a.SetReadOnly(name, readOnly)
}

func (t *layerTree) Space() (int, uint64, uint64) {
	s := t.fs.Statfs()
	unit := int64(max(s.BlockSize, 1))
	return int(unit), uint64(s.TotalBytes / unit), uint64(s.FreeBytes / unit)
}

func (t *layerTree) Sync() error {
	if t.w == nil {
		return nil
	}
	return t.w.Sync()
}

func (t *layerTree) Close() error { return t.fs.Close() }

// readFile is a file of a read-only open: writes are refused.
type readFile struct {
	filesystem.File
	name string
}

func (f *readFile) Name() string { return f.name }
func (f *readFile) WriteAt(p []byte, off int64) (int, error) {
	return 0, &iofs.PathError{Op: "write", Path: f.name, Err: filesystem.ErrReadOnly}
}
func (f *readFile) Truncate(int64) error {
	return &iofs.PathError{Op: "truncate", Path: f.name, Err: filesystem.ErrReadOnly}
}
func (f *readFile) Sync() error { return nil }

// writeFile is a file opened for writing.
type writeFile struct {
	filesystem.WritableFile
	name string
}

func (f *writeFile) Name() string { return f.name }
