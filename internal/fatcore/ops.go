package fatcore

import (
	"fmt"
	iofs "io/fs"
	"os"
	"time"
)

// Tree is what the path operations of Paths (Stat, ReadDir, Mkdir,
// Remove, RemoveAll, Chtimes, SetCreateTime, SetAttributes, Rename) ask of
// a package on top of Opener: the on-disk part of each, and the few
// questions about directories and entries whose answers differ between
// FAT and exFAT. Like Opener, it is the package's backend, called with
// the FS's lock held. I is the package's *FileInfo, A its Attr.
type Tree[N node, D, E comparable, I iofs.FileInfo, A ~uint8 | ~uint16] interface {
	Opener[N, D, E]
	// Dirs is how the package's directory tree is walked.
	Dirs() Dirs[D, E]
	RootInfo() I
	EntryInfo(e E) I
	// HasListing reports whether e is a directory whose entries can be
	// read (FAT: not one damaged beyond use, which is removed unread).
	HasListing(e E) bool
	// Empty reports whether d holds nothing a removal would lose.
	Empty(d D) bool
	// Children returns d's live entries in slot order.
	Children(d D) []E
	// NewCluster takes a free cluster for a new directory.
	NewCluster() (uint32, error)
	// MakeDir creates directory base, which does not exist, in parent
	// (whose Corrupt and the name's CheckName passed), in cluster c from
	// NewCluster.
	MakeDir(parent D, base string, c uint32) error
	// Unlink erases e from its directory and frees (or, if it is open,
	// orphans) its clusters.
	Unlink(e E) error
	// ChangeEntry applies change to e's metadata (in the package's order
	// of checks) and writes it.
	ChangeEntry(parent D, e E, change func(E)) error
	SetTimes(e E, atime, mtime time.Time)
	SetCreated(e E, ctime time.Time)
	SetAttr(e E, a A)
	// The checks of a rename, in Rename's order. CheckSource refuses a
	// source before the destination is looked at (FAT: an entry damaged
	// beyond use); Inside reports whether directory d is e or lies below
	// it; Respell handles a rename of se to another spelling of its own
	// name (done: nothing more to do); CheckReplaced refuses a destination
	// that cannot be replaced, before its kind is compared; HasClusters
	// reports whether e owns clusters (which replacing it frees);
	// CommitEntry writes e's open file's pending changes, so that the
	// entry on disk is as it is in memory.
	CheckSource(e E) error
	Inside(d D, e E) bool
	Respell(sp D, se E, dp D, dbase string) (done bool, err error)
	CheckReplaced(e E) error
	HasClusters(e E) bool
	CommitEntry(e E) error
	// Move is the on-disk part of a rename whose ends RenameEnds found
	// and whose checks Rename made: se of sp becomes dbase in dp,
	// replacing de when it is not zero.
	Move(sp D, se E, dp D, de E, dbase string) error
	ErrNotEmpty() error
}

// Stat describes the named file or directory.
func (p Paths[N, D, E, I, A]) Stat(name string) (I, error) {
	p.o.Lock()
	defer p.o.Unlock()
	return Stat(name, p.o.Closed(), p.o.Resolve, p.o.RootInfo, p.o.EntryInfo)
}

// ReadDir lists a directory, sorted by name. The entries are the
// package's *FileInfo. If the directory holds entries that cannot be
// understood, the valid ones are returned together with an error wrapping
// the package's ErrCorrupt.
func (p Paths[N, D, E, I, A]) ReadDir(name string) ([]iofs.DirEntry, error) {
	p.o.Lock()
	defer p.o.Unlock()
	return ReadDir(name, p.o.Closed(), p.o.Dirs(), p.o.List)
}

// Mkdir creates a directory. Its cluster reaches the disk before the
// parent's entry that makes it a directory (see each package's doc).
func (p Paths[N, D, E, I, A]) Mkdir(name string) error {
	p.o.Lock()
	defer p.o.Unlock()
	return PathErr("mkdir", name, p.mkdir(name))
}

// MkdirHeld is Mkdir for a caller that already holds the lock (a
// package's MakeRoom making the directory it sizes).
func (p Paths[N, D, E, I, A]) MkdirHeld(name string) error {
	return PathErr("mkdir", name, p.mkdir(name))
}

func (p Paths[N, D, E, I, A]) mkdir(name string) error {
	if err := p.o.Writable(); err != nil {
		return err
	}
	parent, e, base, err := p.o.Resolve(name)
	if err != nil {
		return err
	}
	var noDir D
	var noEntry E
	if parent == noDir || e != noEntry {
		return iofs.ErrExist
	}
	if err := p.o.CheckName(base); err != nil {
		return err
	}
	if err := p.o.Corrupt(parent); err != nil {
		return err
	}
	c, err := p.o.NewCluster()
	if err != nil {
		return err
	}
	return p.o.MakeDir(parent, base, c)
}

// Remove removes a file or an empty directory. The entry goes first, then
// the clusters are freed, so a crash in between leaves only clusters no
// file needs. A file that is still open keeps its clusters (and its
// content readable through the open handles) until the last Close.
func (p Paths[N, D, E, I, A]) Remove(name string) error {
	p.o.Lock()
	defer p.o.Unlock()
	return PathErr("remove", name, p.remove(name))
}

func (p Paths[N, D, E, I, A]) remove(name string) error {
	t := p.o
	parent, e, err := Target(name, t.Writable, t.Resolve)
	if err != nil {
		return err
	}
	var noDir D
	if parent == noDir {
		return fmt.Errorf("%w: cannot remove the root directory", iofs.ErrInvalid)
	}
	if err := t.Corrupt(parent); err != nil {
		return err
	}
	if t.HasListing(e) {
		d, err := t.OpenDir(parent, e)
		if err != nil {
			return err
		}
		if !t.Empty(d) {
			return t.ErrNotEmpty()
		}
	}
	if err := t.EnsureUnshared(); err != nil {
		return err
	}
	return t.Unlink(e)
}

// RemoveAll removes name and everything below it. A missing name is not
// an error.
func (p Paths[N, D, E, I, A]) RemoveAll(name string) error {
	p.o.Lock()
	defer p.o.Unlock()
	return RemoveAll(name, p.o.Writable, p.o.Resolve, p.removeTree)
}

// removeTree removes e of parent and, first, everything below it, in
// slot order; the cross-link guard runs before anything is freed.
func (p Paths[N, D, E, I, A]) removeTree(parent D, e E) error {
	t := p.o
	if err := t.Corrupt(parent); err != nil {
		return err
	}
	if err := t.EnsureUnshared(); err != nil {
		return err
	}
	if t.HasListing(e) {
		d, err := t.OpenDir(parent, e)
		if err != nil {
			return err
		}
		for _, c := range t.Children(d) {
			if err := p.removeTree(d, c); err != nil {
				return err
			}
		}
		if err := t.Corrupt(d); err != nil {
			return err
		}
	}
	return t.Unlink(e)
}

// Chtimes sets the access and modification times, like os.Chtimes; a zero
// time leaves that time unchanged. The root directory has no times;
// Chtimes on it does nothing.
func (p Paths[N, D, E, I, A]) Chtimes(name string, atime, mtime time.Time) error {
	p.o.Lock()
	defer p.o.Unlock()
	return PathErr("chtimes", name, p.change(name, func(e E) { p.o.SetTimes(e, atime, mtime) }))
}

// SetCreateTime sets the creation time.
func (p Paths[N, D, E, I, A]) SetCreateTime(name string, ctime time.Time) error {
	p.o.Lock()
	defer p.o.Unlock()
	return PathErr("chtimes", name, p.change(name, func(e E) { p.o.SetCreated(e, ctime) }))
}

// SetAttributes sets the read-only, hidden, system and archive bits (the
// directory bit cannot be changed).
func (p Paths[N, D, E, I, A]) SetAttributes(name string, a A) error {
	p.o.Lock()
	defer p.o.Unlock()
	return PathErr("chattr", name, p.change(name, func(e E) { p.o.SetAttr(e, a) }))
}

// change changes an existing entry's metadata; the root has none, and a
// change to it does nothing.
func (p Paths[N, D, E, I, A]) change(name string, change func(E)) error {
	parent, e, err := Target(name, p.o.Writable, p.o.Resolve)
	var noDir D
	if err != nil || parent == noDir {
		return err
	}
	return p.o.ChangeEntry(parent, e, change)
}

// Rename moves oldpath to newpath, across directories if needed. Like
// POSIX rename, an existing file at newpath is replaced (an existing empty
// directory, when moving a directory). Errors are *os.LinkError values.
// The order of the writes is each package's (see its doc).
func (p Paths[N, D, E, I, A]) Rename(oldpath, newpath string) error {
	p.o.Lock()
	defer p.o.Unlock()
	if err := p.rename(oldpath, newpath); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// RenameHeld is Rename for a caller that already holds the lock (a
// package's RenameAll renaming, one by one, what its batch cannot take);
// its error is not wrapped in an *os.LinkError.
func (p Paths[N, D, E, I, A]) RenameHeld(oldpath, newpath string) error {
	return p.rename(oldpath, newpath)
}

func (p Paths[N, D, E, I, A]) rename(oldpath, newpath string) error {
	t := p.o
	sp, se, dp, de, dbase, err := RenameEnds(oldpath, newpath, t.Writable, t.Resolve, t.CheckSource)
	if err != nil {
		return err
	}
	if err := t.CheckName(dbase); err != nil {
		return err
	}
	if err := t.Corrupt(sp); err != nil {
		return err
	}
	if err := t.Corrupt(dp); err != nil {
		return err
	}
	if t.IsDir(se) && t.Inside(dp, se) {
		return fmt.Errorf("%w: cannot move %s into itself", iofs.ErrInvalid, oldpath)
	}
	var noEntry E
	if de == se {
		if done, err := t.Respell(sp, se, dp, dbase); done || err != nil {
			return err
		}
		de = noEntry // only the spelling changes
	}
	if de != noEntry {
		if err := p.replaceable(dp, se, de); err != nil {
			return err
		}
	}
	// Both entries must be on disk as they are in memory first.
	if err := t.CommitEntry(se); err != nil {
		return err
	}
	if de != noEntry {
		if err := t.CommitEntry(de); err != nil {
			return err
		}
	}
	return t.Move(sp, se, dp, de, dbase)
}

// replaceable checks that de of dp may be replaced by se: a file by a
// file, an empty directory by a directory; the cross-link guard runs
// before the replaced clusters are freed.
func (p Paths[N, D, E, I, A]) replaceable(dp D, se, de E) error {
	t := p.o
	if err := t.CheckReplaced(de); err != nil {
		return err
	}
	switch {
	case t.IsDir(se) && !t.IsDir(de):
		return t.ErrNotDir()
	case !t.IsDir(se) && t.IsDir(de):
		return t.ErrIsDir()
	case t.IsDir(de):
		d, err := t.OpenDir(dp, de)
		if err != nil {
			return err
		}
		if !t.Empty(d) {
			return t.ErrNotEmpty()
		}
	}
	if t.HasClusters(de) {
		return t.EnsureUnshared()
	}
	return nil
}
