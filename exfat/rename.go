package exfat

import (
	"fmt"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// Move is the on-disk part of Rename (fatcore.Paths.Rename made the
// checks). Like POSIX rename, an existing file at newpath is replaced (an
// existing empty directory, when moving a directory).
//
// Order of writes: when the new entry set fits where the replaced one (or,
// within one directory, the old one) was, it is rewritten there in one
// sector write. Otherwise the new set is written before the old one is
// marked unused, so a crash in between leaves both names pointing at the
// same clusters (Check reports a cross-link) rather than losing the file;
// a replaced file's set is removed just before the new one is written.
// A replaced file's clusters are freed last.
func (b *backend) Move(sp *dirCache, se *entry, dp *dirCache, de *entry, dbase string) error {
	fs := b.fs()
	units := nameUnits(dbase)
	var err error
	tmpl := *se
	tmpl.extra = append([]byte(nil), se.extra...)
	tmpl.units = units

	// The clusters of a replaced entry, freed at the end (an open one
	// keeps them until its last Close).
	var replaced chain
	if de != nil {
		if n := de.node; n != nil {
			detached := *de
			n.ent = &detached
			fs.nodes.Orphan(n)
		} else if de.start != 0 {
			cs := int64(fs.g.clusterSize)
			if replaced, _, err = fs.loadChain(de.start, (int64(de.size)+cs-1)/cs, de.noFatChain()); err != nil {
				return fmt.Errorf("%s: %w", de.name, err)
			}
		}
		if de.isDir() {
			delete(fs.dirs, de.start)
		}
	}

	var ne *entry
	switch {
	case de != nil:
		// Over the replaced set, in one write when it fits there.
		if ne, err = dp.rewrite(de, &tmpl); err != nil {
			return err
		}
		if ne == nil {
			if err := dp.remove(de); err != nil {
				return err
			}
		}
	case dp == sp:
		if ne, err = dp.rewrite(se, &tmpl); err != nil {
			return err
		}
	}
	if ne == nil {
		if ne, err = dp.add(units, &tmpl, false); err != nil {
			return err
		}
	}
	if moved := ne.slot != se.slot || dp != sp; moved && fs.renameTails != nil && se.node == nil && !se.isDir() {
		// In a RenameAll: the old set's removal (and the freeing of what
		// it replaced), which must wait for a barrier after the new set,
		// waits for the batch's one barrier.
		*fs.renameTails = append(*fs.renameTails, renameTail{sp, se, replaced})
		return nil
	}
	if ne.slot != se.slot || dp != sp {
		// The new set reaches the disk before the old one is removed:
		// between flushes a disk may persist writes in any order, and a
		// power cut that kept the removal but not the new set lost the
		// file (the crash explorer, cmd/cryptvol
		// TestCrashStatesFilesystems, issue 31).
		if err := fatcore.SyncDevice(fs.w); err != nil {
			return err
		}
		if err := sp.remove(se); err != nil {
			return err
		}
	}
	if n := se.node; n != nil {
		n.ent = ne
		ne.node = n
	}
	if se.isDir() {
		if d, ok := fs.dirs[se.start]; ok {
			d.parent, d.self = dp, ne
		}
	}
	if replaced.N > 0 {
		fs.freeChain(replaced)
		return fs.flushBitmap()
	}
	return nil
}

func (b *backend) CheckSource(*entry) error { return nil }

func (b *backend) CheckName(base string) error {
	_, err := checkName(base)
	return err
}

// Inside reports whether directory d is e or lies below it.
func (b *backend) Inside(d *dirCache, e *entry) bool {
	for ; d != nil; d = d.parent {
		if d.self == e || d.parent != nil && d.firstCluster() == e.start {
			return true
		}
	}
	return false
}

// Respell: a rename to the name se already has does nothing; to another
// spelling of it, Move rewrites the set.
func (b *backend) Respell(sp *dirCache, se *entry, dp *dirCache, dbase string) (bool, error) {
	return se.name == dbase, nil
}

func (b *backend) CheckReplaced(*entry) error { return nil }

func (b *backend) HasClusters(e *entry) bool { return e.start != 0 }

// CommitEntry commits e's open file, if it has one.
func (b *backend) CommitEntry(e *entry) error {
	if n := e.node; n != nil {
		return b.fs().commit(n)
	}
	return nil
}
