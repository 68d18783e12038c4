package fatcore

import (
	"fmt"
	iofs "io/fs"
)

// The frames below are the path-level part of FS operations that is the
// same on FAT and exFAT: the order of the checks (closed or read-only
// first, then the path, then the root, then existence) and so which error
// a bad call gets. Each runs under the FS's lock; the package passes its
// own resolve (Dirs.Resolve) and does the on-disk part itself.

// Resolver is a package's FS.resolve: the parent directory of name and its
// entry, both zero for the root, the entry zero when name does not exist.
type Resolver[D, E comparable] func(name string) (parent D, e E, base string, err error)

// Target resolves name for a change to an existing entry: the filesystem
// must be writable and name must exist. The root, which has no entry,
// comes back as a zero parent with no error, for the caller to refuse or
// ignore as its operation requires.
func Target[D, E comparable](name string, writable func() error, resolve Resolver[D, E]) (parent D, e E, err error) {
	var noDir D
	var noEntry E
	if err := writable(); err != nil {
		return noDir, noEntry, err
	}
	parent, e, _, err = resolve(name)
	if err != nil {
		return noDir, noEntry, err
	}
	if parent != noDir && e == noEntry {
		return noDir, noEntry, iofs.ErrNotExist
	}
	return parent, e, nil
}

// Stat is FS.Stat: root describes the root directory, info an entry.
func Stat[D, E comparable, I any](name string, closed bool, resolve Resolver[D, E], root func() I, info func(E) I) (I, error) {
	var none I
	if closed {
		return none, PathErr("stat", name, iofs.ErrClosed)
	}
	parent, e, _, err := resolve(name)
	if err != nil {
		return none, PathErr("stat", name, err)
	}
	var noDir D
	var noEntry E
	if parent == noDir {
		return root(), nil
	}
	if e == noEntry {
		return none, PathErr("stat", name, iofs.ErrNotExist)
	}
	return info(e), nil
}

// ReadDir is FS.ReadDir: list returns a directory's entries (the valid
// ones together with an error when some cannot be understood).
func ReadDir[D, E comparable](name string, closed bool, t Dirs[D, E], list func(D) ([]iofs.DirEntry, error)) ([]iofs.DirEntry, error) {
	if closed {
		return nil, PathErr("readdir", name, iofs.ErrClosed)
	}
	d, err := t.Dir(SplitPath(name))
	if err != nil {
		return nil, PathErr("readdir", name, err)
	}
	entries, err := list(d)
	return entries, PathErr("readdir", name, err)
}

// RenameEnds resolves both ends of a rename: the source must exist and not
// be the root, the destination's parent must exist and the destination
// must not be the root. checkSource (nil for none) refuses a source before
// the destination is looked at (FAT: an entry damaged beyond use).
func RenameEnds[D, E comparable](oldpath, newpath string, writable func() error, resolve Resolver[D, E], checkSource func(E) error) (sp D, se E, dp D, de E, dbase string, err error) {
	var noDir D
	var noEntry E
	fail := func(err error) (D, E, D, E, string, error) { return noDir, noEntry, noDir, noEntry, "", err }
	sp, se, err = Target(oldpath, writable, resolve)
	if err != nil {
		return fail(err)
	}
	if sp == noDir {
		return fail(fmt.Errorf("%w: cannot rename the root directory", iofs.ErrInvalid))
	}
	if checkSource != nil {
		if err := checkSource(se); err != nil {
			return fail(err)
		}
	}
	dp, de, dbase, err = resolve(newpath)
	if err != nil {
		return fail(err)
	}
	if dp == noDir {
		return fail(fmt.Errorf("%w: cannot replace the root directory", iofs.ErrInvalid))
	}
	return sp, se, dp, de, dbase, nil
}
