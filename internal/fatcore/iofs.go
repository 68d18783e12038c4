package fatcore

import (
	"io"
	iofs "io/fs"
	"os"
)

// Tree is the path API of a filesystem package (FS.OpenFile, FS.ReadDir),
// which its *FS provides as it is.
type Tree[N, D any] interface {
	OpenFile(name string, flag int, perm iofs.FileMode) (*File[N, D], error)
	ReadDir(name string) ([]iofs.DirEntry, error)
}

// IOFS returns a read-only io/fs view of t (fs.FS, fs.ReadDirFS,
// fs.StatFS and fs.ReadFileFS). stat is t's Stat with its *FileInfo
// turned into an fs.FileInfo (nil on error); isDir is t's ErrIsDir.
func IOFS[N, D any](t Tree[N, D], stat func(string) (iofs.FileInfo, error), isDir error) iofs.FS {
	return ioFS[N, D]{t: t, stat: stat, isDir: isDir}
}

type ioFS[N, D any] struct {
	t     Tree[N, D]
	stat  func(string) (iofs.FileInfo, error)
	isDir error
}

func validPath(op, name string) error {
	if !iofs.ValidPath(name) {
		return &iofs.PathError{Op: op, Path: name, Err: iofs.ErrInvalid}
	}
	return nil
}

func (f ioFS[N, D]) Open(name string) (iofs.File, error) {
	if err := validPath("open", name); err != nil {
		return nil, err
	}
	file, err := f.t.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return file, nil
}

func (f ioFS[N, D]) ReadDir(name string) ([]iofs.DirEntry, error) {
	if err := validPath("readdir", name); err != nil {
		return nil, err
	}
	return f.t.ReadDir(name)
}

func (f ioFS[N, D]) Stat(name string) (iofs.FileInfo, error) {
	if err := validPath("stat", name); err != nil {
		return nil, err
	}
	return f.stat(name)
}

func (f ioFS[N, D]) ReadFile(name string) ([]byte, error) {
	if err := validPath("readfile", name); err != nil {
		return nil, err
	}
	return ReadFile(f.t, name, f.isDir)
}

// ReadFile reads a whole file of t; isDir is t's ErrIsDir, returned for a
// directory.
func ReadFile[N, D any](t Tree[N, D], name string, isDir error) ([]byte, error) {
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
		return nil, PathErr("read", name, isDir)
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
func WriteFile[N, D any](t Tree[N, D], name string, data []byte, perm iofs.FileMode) error {
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
