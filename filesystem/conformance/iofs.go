package conformance

import (
	"io"
	"io/fs"
	"sort"

	"github.com/cryptvol/cryptvol/filesystem"
)

// IOFS presents fsys as an io/fs.FS (with ReadDirFS, StatFS and
// ReadLinkFS), so that testing/fstest.TestFS and the io/fs helpers can
// judge it. Names are io/fs names: unrooted, "." for the root, and
// anything fs.ValidPath refuses is refused (filesystem.FS itself is
// more lenient, and TestFS checks that invalid names fail).
func IOFS(fsys filesystem.FS) fs.FS { return ioFS{fsys} }

type ioFS struct{ f filesystem.FS }

var (
	_ fs.ReadDirFS  = ioFS{}
	_ fs.StatFS     = ioFS{}
	_ fs.ReadLinkFS = ioFS{}
)

func (x ioFS) name(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return "/", nil
	}
	return "/" + name, nil
}

func (x ioFS) Open(name string) (fs.File, error) {
	p, err := x.name("open", name)
	if err != nil {
		return nil, err
	}
	fi, err := x.f.Stat(p)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return &dirFile{fsys: x, name: name, fi: fi}, nil
	}
	return x.f.Open(p)
}

func (x ioFS) Stat(name string) (fs.FileInfo, error) {
	p, err := x.name("stat", name)
	if err != nil {
		return nil, err
	}
	return x.f.Stat(p)
}

func (x ioFS) Lstat(name string) (fs.FileInfo, error) {
	p, err := x.name("lstat", name)
	if err != nil {
		return nil, err
	}
	return x.f.Lstat(p)
}

func (x ioFS) ReadLink(name string) (string, error) {
	p, err := x.name("readlink", name)
	if err != nil {
		return "", err
	}
	return x.f.Readlink(p)
}

// ReadDir sorts, as fs.ReadDirFS requires (filesystem.FS lists in the
// filesystem's own order).
func (x ioFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := x.name("readdir", name)
	if err != nil {
		return nil, err
	}
	ents, err := x.f.ReadDir(p)
	if err != nil {
		return nil, err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, nil
}

// dirFile is an open directory: filesystem.File reads no directories,
// so ReadDir goes to the FS.
type dirFile struct {
	fsys  ioFS
	name  string
	fi    fs.FileInfo
	ents  []fs.DirEntry
	read  bool
	close bool
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.fi, nil }

func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: filesystem.ErrIsDir}
}

func (d *dirFile) Close() error {
	if d.close {
		return &fs.PathError{Op: "close", Path: d.name, Err: fs.ErrClosed}
	}
	d.close = true
	return nil
}

func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.close {
		return nil, &fs.PathError{Op: "readdir", Path: d.name, Err: fs.ErrClosed}
	}
	if !d.read {
		ents, err := d.fsys.ReadDir(d.name)
		if err != nil {
			return nil, err
		}
		d.ents, d.read = ents, true
	}
	if n <= 0 {
		ents := d.ents
		d.ents = nil
		return ents, nil
	}
	if len(d.ents) == 0 {
		return nil, io.EOF
	}
	k := min(n, len(d.ents))
	ents := d.ents[:k]
	d.ents = d.ents[k:]
	return ents, nil
}
