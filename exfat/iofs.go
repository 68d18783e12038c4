package exfat

import (
	"io"
	iofs "io/fs"
	"os"
)

// IOFS returns a read-only io/fs view of the filesystem (fs.FS,
// fs.ReadDirFS, fs.StatFS and fs.ReadFileFS), for fs.WalkDir, fs.Glob,
// http.FS, testing/fstest and the like. Paths follow io/fs rules: no
// leading slash, "." for the root.
func (fs *FS) IOFS() iofs.FS { return ioFS{fs} }

type ioFS struct{ fs *FS }

func (f ioFS) check(op, name string) error {
	if !iofs.ValidPath(name) {
		return &iofs.PathError{Op: op, Path: name, Err: iofs.ErrInvalid}
	}
	return nil
}

func (f ioFS) Open(name string) (iofs.File, error) {
	if err := f.check("open", name); err != nil {
		return nil, err
	}
	file, err := f.fs.Open(name)
	if err != nil {
		return nil, err
	}
	return file, nil
}

func (f ioFS) ReadDir(name string) ([]iofs.DirEntry, error) {
	if err := f.check("readdir", name); err != nil {
		return nil, err
	}
	return f.fs.ReadDir(name)
}

func (f ioFS) Stat(name string) (iofs.FileInfo, error) {
	if err := f.check("stat", name); err != nil {
		return nil, err
	}
	fi, err := f.fs.Stat(name)
	if err != nil {
		return nil, err
	}
	return fi, nil
}

func (f ioFS) ReadFile(name string) ([]byte, error) {
	if err := f.check("readfile", name); err != nil {
		return nil, err
	}
	return f.fs.ReadFile(name)
}

// ReadFile reads a whole file.
func (fs *FS) ReadFile(name string) ([]byte, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, pathErr("read", name, ErrIsDir)
	}
	b := make([]byte, fi.Size())
	n, err := f.ReadAt(b, 0)
	if err == io.EOF && n == len(b) {
		err = nil
	}
	return b[:n], err
}

// WriteFile creates or replaces a file with data. A new file's content
// appears at once: its directory entry is written only after the data and
// the FAT. An existing file keeps its old content on disk until the new
// content is complete (see Truncate).
func (fs *FS) WriteFile(name string, data []byte, perm iofs.FileMode) error {
	f, err := fs.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
