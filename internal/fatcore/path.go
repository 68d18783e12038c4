package fatcore

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"strings"
)

// SplitPath cleans name (with or without a leading slash) into components;
// the root is an empty list. ".." never climbs above the root.
func SplitPath(name string) []string {
	clean := path.Clean("/" + name)
	if clean == "/" {
		return nil
	}
	return strings.Split(clean[1:], "/")
}

// Dirs is how a package walks its directory tree: D is a directory's
// cache, E an entry in it (the zero E means "no such name").
type Dirs[D, E comparable] struct {
	Root   D
	Lookup func(d D, name string) E
	IsDir  func(e E) bool
	// Open returns the cache of directory e, found in parent.
	Open   func(parent D, e E) (D, error)
	NotDir error // the package's ErrNotDir
}

// Dir walks the components to a directory.
func (t Dirs[D, E]) Dir(parts []string) (D, error) {
	var noEntry E
	var noDir D
	d := t.Root
	for _, p := range parts {
		e := t.Lookup(d, p)
		if e == noEntry {
			return noDir, iofs.ErrNotExist
		}
		if !t.IsDir(e) {
			return noDir, t.NotDir
		}
		var err error
		if d, err = t.Open(d, e); err != nil {
			return noDir, err
		}
	}
	return d, nil
}

// Resolve returns the parent directory of name and its entry (zero when
// the last component does not exist); the root has a zero parent.
func (t Dirs[D, E]) Resolve(name string) (parent D, e E, base string, err error) {
	parts := SplitPath(name)
	if len(parts) == 0 {
		return parent, e, "", nil
	}
	if parent, err = t.Dir(parts[:len(parts)-1]); err != nil {
		var none D
		return none, e, "", err
	}
	base = parts[len(parts)-1]
	return parent, t.Lookup(parent, base), base, nil
}

// RemoveAll is the frame of FS.RemoveAll, run under the FS's lock: a
// missing name is not an error, the root cannot go, and removeTree takes
// the rest.
func RemoveAll[D, E comparable](name string, writable func() error, resolve func(string) (D, E, string, error), removeTree func(D, E) error) error {
	if err := writable(); err != nil {
		return PathErr("removeall", name, err)
	}
	parent, e, _, err := resolve(name)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return PathErr("removeall", name, err)
	}
	var noDir D
	var noEntry E
	if parent == noDir {
		return PathErr("removeall", name, fmt.Errorf("%w: cannot remove the root directory", iofs.ErrInvalid))
	}
	if e == noEntry {
		return nil
	}
	return PathErr("removeall", name, removeTree(parent, e))
}

// Dir is a package's directory as messages name it: Parent is the zero D
// for the root, Name its name in its parent (not asked of the root).
type Dir[D any] interface {
	comparable
	Parent() D
	Name() string
}

// DirPath is d's path for messages: "/" for the root, else its parent's
// path and its name.
func DirPath[D Dir[D]](d D) string {
	var root D
	p := d.Parent()
	switch {
	case p == root:
		return "/"
	case p.Parent() == root:
		return "/" + d.Name()
	}
	return DirPath(p) + "/" + d.Name()
}

// BadSummary is how a corrupt directory's error names what is wrong: the
// first damaged entry, and how many more there are, so the message stays
// one line however much garbage the directory holds.
func BadSummary(bad []string) string {
	if len(bad) > 1 {
		return fmt.Sprintf("%s (and %d more)", bad[0], len(bad)-1)
	}
	return bad[0]
}
