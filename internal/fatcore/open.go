package fatcore

import (
	iofs "io/fs"
	"os"
)

// Opener is what OpenFile asks of a filesystem on top of what an open File
// does: the directory tree and the making and opening of files. E is a
// directory entry (zero: none). Like Backend, it is each package's
// backend type, called with the FS's lock held.
type Opener[N node, D, E comparable] interface {
	Backend[N, D]
	Resolve(name string) (parent D, e E, base string, err error)
	Root() D
	IsDir(e E) bool
	// ReadOnly reports the entry's read-only attribute.
	ReadOnly(e E) bool
	OpenDir(parent D, e E) (D, error)
	// CheckName refuses a name the package cannot store.
	CheckName(base string) error
	// Corrupt is d's refusal to be changed (garbage, entries that cannot
	// be understood), or nil.
	Corrupt(d D) error
	// AddFile adds a new empty file base (whose name passed CheckName) to
	// parent (which passed Corrupt). A perm without write bits makes the
	// file read-only.
	AddFile(parent D, base string, perm iofs.FileMode) (E, error)
	// OpenNode returns e's node (loading it if no handle has it open).
	OpenNode(e E) (N, error)
}

// OpenFile is FS.OpenFile, called with the FS's lock held: the os flags
// (O_RDONLY, O_WRONLY, O_RDWR, O_APPEND, O_CREATE, O_EXCL, O_TRUNC) mean
// the same on FAT and exFAT, and so do the errors a bad combination gets.
func OpenFile[N node, D, E comparable](t Opener[N, D, E], name string, flag int, perm iofs.FileMode) (*File[N, D], error) {
	f, err := openFile(t, name, flag, perm)
	if err != nil {
		return nil, PathErr("open", name, err)
	}
	return f, nil
}

func openFile[N node, D, E comparable](t Opener[N, D, E], name string, flag int, perm iofs.FileMode) (*File[N, D], error) {
	if t.Closed() {
		return nil, iofs.ErrClosed
	}
	writing := flag&AccessMode != os.O_RDONLY || flag&(os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
	if writing {
		if err := t.Writable(); err != nil {
			return nil, err
		}
	}
	parent, e, base, err := t.Resolve(name)
	if err != nil {
		return nil, err
	}
	var noDir D
	var noEntry E
	if parent == noDir { // the root
		if writing {
			return nil, t.ErrIsDir()
		}
		return NewDir(t, t.Root(), name, flag), nil
	}
	if e == noEntry {
		if flag&os.O_CREATE == 0 {
			return nil, iofs.ErrNotExist
		}
		n, err := create(t, parent, base, perm)
		if err != nil {
			return nil, err
		}
		t.Nodes().Hold(n)
		return NewFile(t, n, name, flag), nil
	}
	if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
		return nil, iofs.ErrExist
	}
	if t.IsDir(e) {
		if writing {
			return nil, t.ErrIsDir()
		}
		d, err := t.OpenDir(parent, e)
		if err != nil {
			return nil, err
		}
		return NewDir(t, d, name, flag), nil
	}
	writes := flag&AccessMode != os.O_RDONLY
	if writes && t.ReadOnly(e) {
		return nil, iofs.ErrPermission
	}
	trunc := flag&os.O_TRUNC != 0 && writes
	n, err := t.OpenNode(e)
	if err != nil {
		return nil, err
	}
	t.Nodes().Hold(n)
	f := NewFile(t, n, name, flag)
	if trunc {
		// The package's truncate runs its cross-link guard before it
		// drops clusters; the failure releases the handle again.
		if err := Truncate[N](t, n, 0); err != nil {
			t.Release(n)
			return nil, err
		}
	}
	return f, nil
}

// create adds the new empty file base to parent: the name is checked
// before the directory, as Mkdir and Rename do; its clusters come with the
// first write, its entry is written at the first commit.
func create[N node, D, E comparable](t Opener[N, D, E], parent D, base string, perm iofs.FileMode) (N, error) {
	var none N
	if err := t.CheckName(base); err != nil {
		return none, err
	}
	if err := t.Corrupt(parent); err != nil {
		return none, err
	}
	e, err := t.AddFile(parent, base, perm)
	if err != nil {
		return none, err
	}
	n, err := t.OpenNode(e)
	if err != nil {
		return none, err
	}
	t.Nodes().MarkDirty(n)
	return n, nil
}

// NewFileAttr is a new file's attributes: archive (not yet backed up),
// and read-only when perm has no write bit, as os.OpenFile's perm asks.
func NewFileAttr(perm iofs.FileMode) uint8 {
	if perm&0o222 == 0 {
		return AttrArchive | AttrReadOnly
	}
	return AttrArchive
}
