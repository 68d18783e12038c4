package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/volume"
)

// writerTree is a writeTree on any filesystem.Writer: what put, rm, mkdir
// and mv need, built from the Writer's own operations, in process. ext2/3/4
// is written so (filesystem.OpenExt4Writable): no FUSE, no driver stacked
// on a raw mount, so a kill of the command leaves no mount and no process
// behind, and the filesystem's journal makes each change whole or absent.
type writerTree struct {
	w     filesystem.Writer
	typ   string
	space filesystem.Statfs // before the command
}

// openExt4Tree opens v's ext2/3/4 filesystem with the in-process writer. A
// journal that needs recovery is replayed first (never written around).
func openExt4Tree(a *app, v *volume.Volume, fstype string) (writeTree, func() error, error) {
	w, err := filesystem.OpenExt4Writable(v, v.Size())
	if err != nil {
		v.Close()
		return nil, nil, fsError(err)
	}
	t := &writerTree{w: w, typ: fstype, space: w.Statfs()}
	done := func() error {
		// Close commits the last transaction and flushes the device;
		// only then is the volume closed (and its lock released).
		err := w.Close()
		if cerr := v.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return t, done, nil
}

func (t *writerTree) Type() string                               { return t.typ }
func (t *writerTree) Stat(name string) (fs.FileInfo, error)      { return t.w.Lstat(name) }
func (t *writerTree) ReadDir(name string) ([]fs.DirEntry, error) { return t.w.ReadDir(name) }
func (t *writerTree) Mkdir(name string) error                    { return t.w.Mkdir(name) }
func (t *writerTree) Remove(name string) error                   { return t.w.Remove(name) }
func (t *writerTree) Rename(oldpath, newpath string) error       { return t.w.Rename(oldpath, newpath) }
func (t *writerTree) Statfs() filesystem.Statfs                  { return t.space }

func (t *writerTree) Chtimes(name string, atime, mtime time.Time) error {
	return t.w.Chtimes(name, atime, mtime)
}

// MkdirAll makes name and every missing parent, as os.MkdirAll.
func (t *writerTree) MkdirAll(name string) error {
	p := path.Clean("/" + name)
	if p == "/" {
		return nil
	}
	if fi, err := t.w.Stat(p); err == nil {
		if fi.IsDir() {
			return nil
		}
		return &fs.PathError{Op: "mkdir", Path: p, Err: filesystem.ErrNotDir}
	}
	if err := t.MkdirAll(path.Dir(p)); err != nil {
		return err
	}
	if err := t.w.Mkdir(p); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// RemoveAll removes name and everything below it, as os.RemoveAll: a
// name that does not exist is no error. A link is removed, never followed.
func (t *writerTree) RemoveAll(name string) error {
	p := path.Clean("/" + name)
	if p == "/" {
		return &fs.PathError{Op: "remove", Path: p, Err: fs.ErrPermission}
	}
	fi, err := t.w.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		es, err := t.w.ReadDir(p)
		if err != nil {
			return err
		}
		for _, e := range es {
			if err := t.RemoveAll(path.Join(p, e.Name())); err != nil {
				return err
			}
		}
	}
	return t.w.Remove(p)
}

func (t *writerTree) Symlink(target, name string) error {
	s, ok := t.w.(filesystem.Symlinker)
	if !ok {
		return fmt.Errorf("%s: %s has no symbolic links: %w", name, t.typ, filesystem.ErrUnsupported)
	}
	return s.Symlink(target, name)
}

// CreateExcl creates a new file with perm less the umask, as open(2) does
// (failing if the name exists).
// The check and the create are one step for every other writer of the
// filesystem: the command holds the volume's lock.
func (t *writerTree) CreateExcl(name string, perm fs.FileMode) (io.WriteCloser, error) {
	if _, err := t.w.Lstat(name); err == nil {
		return nil, &fs.PathError{Op: "create", Path: name, Err: fs.ErrExist}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := t.w.Create(name)
	if err != nil {
		return nil, err
	}
	if c, ok := t.w.(filesystem.Chmoder); ok && perm != 0 {
		if err := c.Chmod(name, perm.Perm()&^umask()); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// isInProcessType reports whether a filesystem type is written in process
// by a filesystem.Writer (rather than through a stacked driver).
func isInProcessType(fstype string) bool {
	return strings.HasPrefix(fstype, "ext")
}
