package fatcore

import (
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"strings"
)

// Paths is the part of the FS API that fat and exfat share: Open, Create,
// OpenFile, ReadFile, WriteFile, MkdirAll and the io/fs view, written over
// OpenFile, and the path operations (Stat, ReadDir, Mkdir, Remove,
// RemoveAll, Chtimes, SetCreateTime, SetAttributes, Rename) over the
// package's Tree (ops.go). Each package's FS embeds it (under an
// unexported alias, so only these methods show) and sets it with NewPaths
// when it opens.
type Paths[N node, D, E comparable, I iofs.FileInfo, A ~uint8 | ~uint16] struct {
	o Tree[N, D, E, I, A]
}

// NewPaths returns the Paths of a filesystem whose backend is o.
func NewPaths[N node, D, E comparable, I iofs.FileInfo, A ~uint8 | ~uint16](o Tree[N, D, E, I, A]) Paths[N, D, E, I, A] {
	return Paths[N, D, E, I, A]{o: o}
}

// Open opens a file or directory for reading.
func (p Paths[N, D, E, I, A]) Open(name string) (*File[N, D], error) {
	return p.OpenFile(name, os.O_RDONLY, 0)
}

// Create creates or truncates a file and opens it read-write.
func (p Paths[N, D, E, I, A]) Create(name string) (*File[N, D], error) {
	return p.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// OpenFile opens a file with the os package's flags (O_RDONLY, O_WRONLY,
// O_RDWR, O_APPEND, O_CREATE, O_EXCL, O_TRUNC). A new file whose perm has
// no write bit gets the read-only attribute. Directories open only with
// O_RDONLY.
func (p Paths[N, D, E, I, A]) OpenFile(name string, flag int, perm iofs.FileMode) (*File[N, D], error) {
	p.o.Lock()
	defer p.o.Unlock()
	return OpenFile(p.o, name, flag, perm)
}

// MkdirAll creates a directory and any missing parents.
func (p Paths[N, D, E, I, A]) MkdirAll(name string) error {
	parts := SplitPath(name)
	for i := 1; i <= len(parts); i++ {
		dir := "/" + strings.Join(parts[:i], "/")
		fi, err := p.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return PathErr("mkdir", dir, p.o.ErrNotDir())
			}
			continue
		}
		if err := p.Mkdir(dir); err != nil && !errors.Is(err, iofs.ErrExist) {
			return err
		}
	}
	return nil
}

// IOFS returns a read-only io/fs view of the filesystem (fs.FS,
// fs.ReadDirFS, fs.StatFS and fs.ReadFileFS), for fs.WalkDir, fs.Glob,
// http.FS, testing/fstest and the like. Paths follow io/fs rules: no
// leading slash, "." for the root.
func (p Paths[N, D, E, I, A]) IOFS() iofs.FS { return ioFS[N, D, E, I, A]{p} }

// ReadFile reads a whole file.
func (p Paths[N, D, E, I, A]) ReadFile(name string) ([]byte, error) {
	f, err := p.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, PathErr("read", name, p.o.ErrIsDir())
	}
	b := make([]byte, fi.Size())
	n, err := f.ReadAt(b, 0)
	if err == io.EOF && n == len(b) {
		err = nil
	}
	return b[:n], err
}

// WriteFile creates or replaces a file with data (open with O_TRUNC, one
// Write, Close, which commits it). A new file's content appears at once:
// its directory entry is written only after the data and the allocation.
// An existing file keeps its old content on disk until the new content is
// complete (see File.Truncate).
func (p Paths[N, D, E, I, A]) WriteFile(name string, data []byte, perm iofs.FileMode) error {
	f, err := p.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

type ioFS[N node, D, E comparable, I iofs.FileInfo, A ~uint8 | ~uint16] struct{ p Paths[N, D, E, I, A] }

func validPath(op, name string) error {
	if !iofs.ValidPath(name) {
		return &iofs.PathError{Op: op, Path: name, Err: iofs.ErrInvalid}
	}
	return nil
}

func (f ioFS[N, D, E, I, A]) Open(name string) (iofs.File, error) {
	if err := validPath("open", name); err != nil {
		return nil, err
	}
	file, err := f.p.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err // not a nil *File in an interface
	}
	return file, nil
}

func (f ioFS[N, D, E, I, A]) ReadDir(name string) ([]iofs.DirEntry, error) {
	if err := validPath("readdir", name); err != nil {
		return nil, err
	}
	return f.p.ReadDir(name)
}

func (f ioFS[N, D, E, I, A]) Stat(name string) (iofs.FileInfo, error) {
	if err := validPath("stat", name); err != nil {
		return nil, err
	}
	fi, err := f.p.Stat(name)
	if err != nil {
		return nil, err // not a nil *FileInfo in an interface
	}
	return fi, nil
}

func (f ioFS[N, D, E, I, A]) ReadFile(name string) ([]byte, error) {
	if err := validPath("readfile", name); err != nil {
		return nil, err
	}
	return f.p.ReadFile(name)
}
