package fat

import (
	"fmt"
	"os"
)

// Rename moves oldpath to newpath, across directories if needed. Like
// POSIX rename, an existing file at newpath is replaced (an existing empty
// directory, when moving a directory).
//
// Errors are *os.LinkError values.
//
// Order of writes: the new entry is written before the old one is erased,
// so a crash in between leaves both names pointing at the same clusters
// (fsck.fat reports them as sharing clusters) rather than losing the file.
// When newpath names an existing file, its 8.3 slot is rewritten in place
// to point at the moved data (one sector write), and its old clusters are
// freed last.
func (fs *FS) Rename(oldpath, newpath string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.rename(oldpath, newpath); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

func (fs *FS) rename(oldpath, newpath string) error {
	if err := fs.writable(); err != nil {
		return err
	}
	sp, se, _, err := fs.resolve(oldpath)
	if err != nil {
		return err
	}
	if sp == nil {
		return fmt.Errorf("%w: cannot rename the root directory", errInvalid)
	}
	if se == nil {
		return errNotExist
	}
	dp, de, dbase, err := fs.resolve(newpath)
	if err != nil {
		return err
	}
	if dp == nil {
		return fmt.Errorf("%w: cannot replace the root directory", errInvalid)
	}
	if err := checkName(dbase); err != nil {
		return err
	}
	if err := sp.corrupt(); err != nil {
		return err
	}
	if err := dp.corrupt(); err != nil {
		return err
	}
	if se.isDir() {
		// A directory cannot move into itself or below itself.
		for d := dp; d != nil; d = d.parent {
			if d.self == se || d.firstCluster() == se.start && d.parent != nil {
				return fmt.Errorf("%w: cannot move %s into itself", errInvalid, oldpath)
			}
		}
	}
	if de == se {
		if se.name == dbase {
			return nil
		}
		if dp == sp {
			if n := se.node; n != nil {
				if err := fs.commit(n); err != nil {
					return err
				}
			}
			if done, err := sp.respell(se, dbase); done || err != nil {
				return err
			}
		}
		de = nil // only the spelling changes
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
	// The moved entry must be on disk as it is in memory before it is
	// copied to a new slot.
	if n := se.node; n != nil {
		if err := fs.commit(n); err != nil {
			return err
		}
	}
	if n := de; n != nil && n.node != nil {
		if err := fs.commit(n.node); err != nil {
			return err
		}
	}

	var ne *entry
	var oldDest uint32 // clusters of a replaced entry, to free at the end
	if de != nil && de.name == dbase {
		// Point the existing 8.3 slot at the moved data: one write.
		oldDest = de.start
		if n := de.node; n != nil {
			// Open handles keep a detached copy of the replaced entry and
			// the old clusters until their last Close.
			detached := *de
			n.ent = &detached
			fs.orphan(n)
			oldDest = 0
		}
		ne = de
		ne.attr, ne.start, ne.size = se.attr, se.start, se.size
		ne.cdate, ne.ctime, ne.ccenti = se.cdate, se.ctime, se.ccenti
		ne.adate, ne.mdate, ne.mtime = se.adate, se.mdate, se.mtime
		ne.node = nil
		if err := dp.update(ne); err != nil {
			return err
		}
	} else {
		tmpl := *se
		ne, err = dp.add(dbase, &tmpl, false, nil)
		if err != nil {
			return err
		}
		if de != nil {
			oldDest = de.start
			if de.node != nil {
				fs.orphan(de.node)
				oldDest = 0
			}
			if err := dp.remove(de); err != nil {
				return err
			}
		}
	}
	if err := sp.remove(se); err != nil {
		return err
	}
	if n := se.node; n != nil {
		n.ent = ne
		ne.node = n
	}
	if de != nil && de.isDir() && oldDest != 0 {
		delete(fs.dirs, oldDest)
	}
	if se.isDir() {
		d, err := fs.openDir(dp, ne)
		if err != nil {
			return err
		}
		d.parent, d.self = dp, ne
		if dp != sp && d.dotdot >= 0 {
			dd := &entry{}
			dd.decodeShort(d.data[d.dotdot*32 : d.dotdot*32+32])
			dd.start = dp.firstCluster()
			if dp.parent == nil {
				dd.start = 0
			}
			dd.encodeShort(d.data[d.dotdot*32 : d.dotdot*32+32])
			if err := d.writeSlots(d.dotdot, d.dotdot+1); err != nil {
				return err
			}
		}
	}
	if oldDest != 0 {
		fs.fat.releaseChain(oldDest)
		return fs.flushFAT()
	}
	return nil
}
