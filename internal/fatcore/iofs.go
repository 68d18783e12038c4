package fatcore

import (
	"io"
	iofs "io/fs"
	"os"
)

// Tree is the path API of a filesystem package (FS.OpenFile, FS.ReadDir,
// FS.Stat), which its *FS provides as it is. I is its *FileInfo.
type Tree[N, D any, I iofs.FileInfo] interface {
	OpenFile(name string, flag int, perm iofs.FileMode) (*File[N, D], error)
	ReadDir(name string) ([]iofs.DirEntry, error)
	Stat(name string) (I, error)
}

// IOFS returns a read-only io/fs view of t (fs.FS, fs.ReadDirFS,
// fs.StatFS and fs.ReadFileFS).
func IOFS[N, D any, I iofs.FileInfo](t Tree[N, D, I]) iofs.FS { return ioFS[N, D, I]{t} }

type ioFS[N, D any, I iofs.FileInfo] struct{ t Tree[N, D, I] }

func validPath(op, name string) error {
	if !iofs.ValidPath(name) {
		return &iofs.PathError{Op: op, Path: name, Err: iofs.ErrInvalid}
	}
	return nil
}

func (f ioFS[N, D, I]) Open(name string) (iofs.File, error) {
	if err := validPath("open", name); err != nil {
		return nil, err
	}
	file, err := f.t.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err // not a nil *File in an interface
	}
	return file, nil
}

func (f ioFS[N, D, I]) ReadDir(name string) ([]iofs.DirEntry, error) {
	if err := validPath("readdir", name); err != nil {
		return nil, err
	}
	return f.t.ReadDir(name)
}

func (f ioFS[N, D, I]) Stat(name string) (iofs.FileInfo, error) {
	if err := validPath("stat", name); err != nil {
		return nil, err
	}
	fi, err := f.t.Stat(name)
	if err != nil {
		return nil, err // not a nil *FileInfo in an interface
	}
	return fi, nil
}

func (f ioFS[N, D, I]) ReadFile(name string) ([]byte, error) {
	if err := validPath("readfile", name); err != nil {
		return nil, err
	}
	return ReadFile(f.t, name)
}

// ReadFile reads a whole file of t.
func ReadFile[N, D any, I iofs.FileInfo](t Tree[N, D, I], name string) ([]byte, error) {
	f, err := t.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, PathErr("read", name, f.b.ErrIsDir())
	}
	b := make([]byte, fi.Size())
	n, err := f.ReadAt(b, 0)
	if err == io.EOF && n == len(b) {
		err = nil
	}
	return b[:n], err
}

// WriteFile creates or replaces a file of t with data: open with
// O_TRUNC, one Write, Close (which commits it).
func WriteFile[N, D any, I iofs.FileInfo](t Tree[N, D, I], name string, data []byte, perm iofs.FileMode) error {
	f, err := t.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
