package fsops

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
)

// Tree is the writing view of a filesystem.Writer. Its Statfs is the space
// when the tree was made: the plan of a command is checked against the
// room it started with, not against what its own writes left.
type Tree struct {
	w     filesystem.Writer
	typ   string
	umask fs.FileMode
	space filesystem.Statfs
}

// New returns a Tree on w, reported as typ (the probe's name, e.g. "ext3",
// which the Writer may not distinguish). New files get the permission the
// caller asks for less umask, where the filesystem keeps permissions.
func New(w filesystem.Writer, typ string, umask fs.FileMode) *Tree {
	return &Tree{w: w, typ: typ, umask: umask, space: w.Statfs()}
}

// Writer returns the filesystem the tree writes.
func (t *Tree) Writer() filesystem.Writer { return t.w }

func (t *Tree) Type() string                               { return t.typ }
func (t *Tree) Stat(name string) (fs.FileInfo, error)      { return t.w.Lstat(name) }
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) { return t.w.ReadDir(name) }
func (t *Tree) Mkdir(name string) error                    { return t.w.Mkdir(name) }
func (t *Tree) Remove(name string) error                   { return t.w.Remove(name) }
func (t *Tree) Rename(oldpath, newpath string) error       { return t.w.Rename(oldpath, newpath) }
func (t *Tree) Statfs() filesystem.Statfs                  { return t.space }

// BatchesRenames reports whether RenameAll renames many files for the
// flushes of one rename (filesystem.BatchRenamer: FAT, exFAT).
func (t *Tree) BatchesRenames() bool {
	_, ok := t.w.(filesystem.BatchRenamer)
	return ok
}

// RenameAll renames each pair's [0] onto its [1] as Rename does, in one
// batch where the filesystem has them, else one by one. It returns how
// many pairs, from the first, were renamed.
func (t *Tree) RenameAll(pairs [][2]string) (int, error) {
	if b, ok := t.w.(filesystem.BatchRenamer); ok {
		return b.RenameAll(pairs)
	}
	for i, p := range pairs {
		if err := t.w.Rename(p[0], p[1]); err != nil {
			return i, err
		}
	}
	return len(pairs), nil
}

func (t *Tree) Chtimes(name string, atime, mtime time.Time) error {
	return t.w.Chtimes(name, atime, mtime)
}

// MkdirAll makes name and its missing parents; an existing directory is
// not an error, an existing non-directory on the way is.
func (t *Tree) MkdirAll(name string) error {
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

// MakesRoom reports whether MakeRoom gives a directory its room in one
// step (filesystem.RoomMaker: FAT), rather than making it as MkdirAll.
func (t *Tree) MakesRoom() bool {
	_, ok := t.w.(filesystem.RoomMaker)
	return ok
}

// MakeRoom makes dir and its missing parents as MkdirAll does, and where
// the filesystem sizes a directory in one step (filesystem.RoomMaker:
// FAT) gives dir the room for entries of names, growing it once if it
// exists.
func (t *Tree) MakeRoom(dir string, names []string) error {
	r, ok := t.w.(filesystem.RoomMaker)
	p := path.Clean("/" + dir)
	if !ok || len(names) == 0 {
		return t.MkdirAll(p)
	}
	if p != "/" {
		if err := t.MkdirAll(path.Dir(p)); err != nil {
			return err
		}
	}
	return r.MakeRoom(p, names)
}

// RemoveAll removes name and everything under it, depth first; a name
// that does not exist is not an error, the root may not be removed.
func (t *Tree) RemoveAll(name string) error {
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

// Symlink makes a symbolic link where the filesystem has them.
func (t *Tree) Symlink(target, name string) error {
	s, ok := t.w.(filesystem.Symlinker)
	if !ok {
		return fmt.Errorf("%s: %s has no symbolic links: %w", name, t.typ, filesystem.ErrUnsupported)
	}
	return s.Symlink(target, name)
}

// CreateExcl creates name, which must not exist (put writes a temporary
// name and renames it: it must never truncate a file it did not make).
func (t *Tree) CreateExcl(name string, perm fs.FileMode) (io.WriteCloser, error) {
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
		if err := c.Chmod(name, perm.Perm()&^t.umask); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// HasSymlinks reports whether the filesystem can hold symbolic links.
func (t *Tree) HasSymlinks() bool {
	_, ok := t.w.(filesystem.Symlinker)
	return ok
}

// Protected reports whether fi is a file its owner marked read-only on a
// filesystem of attributes (FAT, exFAT): put --force leaves it alone, as
// Windows' copy does. Elsewhere permission bits are the user's to set and
// replacing the file does not write into it.
func (t *Tree) Protected(fi fs.FileInfo) bool {
	_, ok := t.w.(filesystem.Attributer)
	return ok && !fi.IsDir() && fi.Mode().Perm()&0o200 == 0
}

// KeepMetadata gives a file that replaces old the metadata beyond content
// and times that old had, where the filesystem has such (attributes and
// creation time on FAT and exFAT).
func (t *Tree) KeepMetadata(old, replacement string) error {
	if a, ok := t.w.(filesystem.Attributer); ok {
		return a.KeepMetadata(old, replacement)
	}
	return nil
}
