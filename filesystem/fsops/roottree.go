package fsops

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
)

// RootTree is a Target on the mount point of a kernel driver, reached
// through an os.Root so that no name (nor a link in the volume) leads
// outside it. Until the first change it reads through an in-process
// reader and mounts nothing, so an operation refused by its checks (a
// file that exists, too little space, a missing name) leaves the volume
// as it was, superblock and all.
type RootTree struct {
	typ   string
	ro    filesystem.FS // before the mount
	root  *os.Root      // after it
	space filesystem.Statfs
	mount func() (*os.Root, error)
	err   error // of the mount, once tried
}

// NewRootTree returns a RootTree of type typ that reads ro until the
// first change, which closes ro and calls mount for the root to go on
// through.
func NewRootTree(typ string, ro filesystem.FS, mount func() (*os.Root, error)) *RootTree {
	return &RootTree{typ: typ, ro: ro, space: ro.Statfs(), mount: mount}
}

// Close closes the reader or the root, whichever is open.
func (t *RootTree) Close() {
	if t.ro != nil {
		t.ro.Close()
	}
	if t.root != nil {
		t.root.Close()
	}
}

// writable mounts the driver on the first change.
func (t *RootTree) writable() error {
	if t.root == nil && t.err == nil {
		t.ro.Close()
		t.ro = nil
		t.root, t.err = t.mount()
	}
	return t.err
}

// rel is name inside the root.
func rel(name string) string {
	p := strings.TrimPrefix(path.Clean("/"+name), "/")
	if p == "" {
		return "."
	}
	return p
}

// volErr names the volume's path in an error of the root.
func volErr(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: volPath(name), Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &os.LinkError{Op: le.Op, Old: volPath(le.Old), New: volPath(le.New), Err: le.Err}
	}
	return err
}

func (t *RootTree) Type() string { return t.typ }

func (t *RootTree) Stat(name string) (fs.FileInfo, error) {
	if t.root == nil && t.ro == nil {
		return nil, t.err // the mount failed: the reader is closed too
	}
	if t.root == nil {
		return t.ro.Lstat(name)
	}
	fi, err := t.root.Lstat(rel(name))
	return fi, volErr(name, err)
}

func (t *RootTree) ReadDir(name string) ([]fs.DirEntry, error) {
	if t.root == nil && t.ro == nil {
		return nil, t.err
	}
	if t.root == nil {
		return t.ro.ReadDir(name)
	}
	d, err := t.root.Open(rel(name))
	if err != nil {
		return nil, volErr(name, err)
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	return ents, volErr(name, err)
}

// change runs op on the root once the driver is mounted.
func (t *RootTree) change(name string, op func(r *os.Root, p string) error) error {
	if err := t.writable(); err != nil {
		return err
	}
	return volErr(name, op(t.root, rel(name)))
}

func (t *RootTree) Mkdir(name string) error {
	return t.change(name, func(r *os.Root, p string) error { return r.Mkdir(p, 0o755) })
}

func (t *RootTree) MkdirAll(name string) error {
	return t.change(name, func(r *os.Root, p string) error { return r.MkdirAll(p, 0o755) })
}

func (t *RootTree) Remove(name string) error { return t.change(name, (*os.Root).Remove) }

func (t *RootTree) RemoveAll(name string) error { return t.change(name, (*os.Root).RemoveAll) }

func (t *RootTree) Rename(oldpath, newpath string) error {
	return t.change(oldpath, func(r *os.Root, p string) error { return r.Rename(p, rel(newpath)) })
}

func (t *RootTree) Chtimes(name string, atime, mtime time.Time) error {
	return t.change(name, func(r *os.Root, p string) error { return r.Chtimes(p, atime, mtime) })
}

func (t *RootTree) Symlink(target, name string) error {
	return t.change(name, func(r *os.Root, p string) error { return r.Symlink(target, p) })
}

func (t *RootTree) CreateExcl(name string, perm fs.FileMode) (io.WriteCloser, error) {
	var f *os.File
	err := t.change(name, func(r *os.Root, p string) error {
		var err error
		f, err = r.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (t *RootTree) Statfs() filesystem.Statfs { return t.space }
