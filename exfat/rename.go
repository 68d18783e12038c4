package exfat

import (
	"fmt"
	"os"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// Rename moves oldpath to newpath, across directories if needed. Like
// POSIX rename, an existing file at newpath is replaced (an existing empty
// directory, when moving a directory). Errors are *os.LinkError values.
//
// Order of writes: when the new entry set fits where the replaced one (or,
// within one directory, the old one) was, it is rewritten there in one
// sector write. Otherwise the new set is written before the old one is
// marked unused, so a crash in between leaves both names pointing at the
// same clusters (Check reports a cross-link) rather than losing the file;
// a replaced file's set is removed just before the new one is written.
// A replaced file's clusters are freed last.
func (fs *FS) Rename(oldpath, newpath string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.rename(oldpath, newpath); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

func (fs *FS) rename(oldpath, newpath string) error { return fs.renameDeferring(oldpath, newpath, nil) }

// renameDeferring is rename; with tails set (RenameAll), a closed file's
// removal of its old set (and the freeing of what it replaced), which
// must wait for a barrier after the new set, is appended there instead,
// for the batch's one barrier.
func (fs *FS) renameDeferring(oldpath, newpath string, tails *[]renameTail) error {
	sp, se, dp, de, dbase, err := fatcore.RenameEnds(oldpath, newpath, fs.writable, fs.resolve, nil)
	if err != nil {
		return err
	}
	units, err := checkName(dbase)
	if err != nil {
		return err
	}
	if err := sp.corrupt(); err != nil {
		return err
	}
	if err := dp.corrupt(); err != nil {
		return err
	}
	if se.isDir() {
		for d := dp; d != nil; d = d.parent {
			if d.self == se || d.parent != nil && d.firstCluster() == se.start {
				return fmt.Errorf("%w: cannot move %s into itself", errInvalid, oldpath)
			}
		}
	}
	if de == se {
		if se.name == dbase {
			return nil
		}
		de = nil // only the spelling changes
	}
	if de != nil && de.start != 0 {
		// The replaced clusters will be freed.
		if err := fs.ensureUnshared(); err != nil {
			return err
		}
	}
	if de != nil {
		switch {
		case se.isDir() && !de.isDir():
			return ErrNotDir
		case !se.isDir() && de.isDir():
			return ErrIsDir
		case de.isDir():
			d, err := fs.openDir(dp, de)
			if err != nil {
				return err
			}
			if !d.isEmpty() || len(d.bad) > 0 {
				return ErrNotEmpty
			}
		}
	}
	// Both entries must be on disk as they are in memory first.
	if n := se.node; n != nil {
		if err := fs.commit(n); err != nil {
			return err
		}
	}
	if de != nil && de.node != nil {
		if err := fs.commit(de.node); err != nil {
			return err
		}
	}
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
	if moved := ne.slot != se.slot || dp != sp; moved && tails != nil && se.node == nil && !se.isDir() {
		*tails = append(*tails, renameTail{sp, se, replaced})
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
