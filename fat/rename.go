package fat

import (
	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// Move is the on-disk part of Rename (fatcore.Paths.Rename made the
// checks). Like POSIX rename, an existing file at newpath is replaced (an
// existing empty directory, when moving a directory).
//
// Order of writes (see doc.go, "Crash safety"): when the old and the new
// entry lie in one directory sector, one write does the whole rename.
// Otherwise the source entry is first marked as being moved (a bit of its
// NT byte), then the new entry is written (or, when newpath exists, its
// 8.3 slot is pointed at the moved data in place), then the source is
// erased, then a replaced file's clusters are freed. A crash leaves the
// volume dirty; the next writable Open finds the marked source beside an
// entry sharing its clusters and erases the source, completing the rename.
func (b *backend) Move(sp *dirCache, se *entry, dp *dirCache, de *entry, dbase string) error {
	fs := b.fs()
	var err error
	var ne *entry
	if de != nil {
		ne, err = fs.replaceEntry(sp, se, dp, de, dbase)
	} else {
		ne, err = fs.moveEntry(sp, se, dp, dbase)
	}
	if err != nil {
		return err
	}
	if n := se.node; n != nil {
		n.ent = ne
		ne.node = n
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
	return nil
}

// CheckSource refuses to move an entry damaged beyond use.
func (b *backend) CheckSource(se *entry) error {
	if se.damageKind == damageData {
		return corruptf("%s: %s", se.name, se.damage)
	}
	return nil
}

func (b *backend) CheckName(base string) error { return checkName(base) }

// Inside reports whether directory d is e or lies below it.
func (b *backend) Inside(d *dirCache, e *entry) bool {
	for ; d != nil; d = d.parent {
		if d.self == e || d.firstCluster() == e.start && d.parent != nil {
			return true
		}
	}
	return false
}

// Respell renames se to another spelling of its name: within its
// directory that is, where the slots allow, a rewrite in place.
func (b *backend) Respell(sp *dirCache, se *entry, dp *dirCache, dbase string) (bool, error) {
	if se.name == dbase {
		return true, nil
	}
	if dp != sp {
		return false, nil
	}
	if err := b.CommitEntry(se); err != nil {
		return true, err
	}
	return sp.respell(se, dbase)
}

// CheckReplaced refuses to replace an entry damaged beyond use.
func (b *backend) CheckReplaced(de *entry) error {
	if de.damageKind == damageData {
		return corruptf("%s: %s", de.name, de.damage)
	}
	return nil
}

func (b *backend) HasClusters(e *entry) bool { return e.start != 0 }

// CommitEntry commits e's open file, if it has one.
func (b *backend) CommitEntry(e *entry) error {
	if n := e.node; n != nil {
		return b.fs().commit(n)
	}
	return nil
}

// moveEntry moves entry e of src to a new entry called name in dst (src
// itself, for a change of name), keeping its data and metadata, and
// returns the new entry. Within one directory sector it is a single write;
// otherwise the source is marked first, then the new entry written, then
// the source erased.
func (fs *FS) moveEntry(src *dirCache, e *entry, dst *dirCache, name string) (*entry, error) {
	short, nt, k, err := dst.shortFor(name, nil)
	if err != nil {
		return nil, err
	}
	s, err := dst.place(k)
	if err != nil {
		return nil, err
	}
	if src == dst && src.sector(s) == src.sector(s+k-1) && src.oneSector(e) && src.sector(s) == src.sector(e.slot) {
		ne := dst.encodeNew(name, e, short, nt, s, k)
		src.erase(e)
		return ne, src.writeSlots(min(s, e.firstSlot()), max(s+k, e.slot+1))
	}
	if err := src.markMoving(e); err != nil {
		return nil, err
	}
	// The mark reaches the disk before the new entry: a new entry beside
	// an unmarked source is a cross-link that repair cannot resolve as a
	// rename (the file then stood in both places).
	if err := fs.barrier(); err != nil {
		return nil, err
	}
	ne := dst.encodeNew(name, e, short, nt, s, k)
	if err := dst.writeEntry(ne); err != nil {
		return nil, err
	}
	// The new entry reaches the disk before the old one is erased: a
	// disk may persist writes out of order between flushes, and a power
	// cut that kept the erase but not the new entry lost the file (the
	// crash explorer, cmd/cryptvol TestCrashStatesFilesystems, issue 31).
	if err := fs.barrier(); err != nil {
		return nil, err
	}
	return ne, src.remove(e)
}

// barrier flushes the device's cache where it has one, so that what was
// written before is on the disk before anything written after.
func (fs *FS) barrier() error {
	return fatcore.SyncDevice(fs.w)
}

// replaceEntry points the existing entry de of dst at the data of entry
// e of src, erases e and frees what de held; de is then respelled name if
// it was found under another spelling. Returned is de, now the moved
// entry.
func (fs *FS) replaceEntry(src *dirCache, e *entry, dst *dirCache, de *entry, name string) (*entry, error) {
	oldDest := de.start
	if n := de.node; n != nil {
		// Open handles keep a detached copy of the replaced entry and the
		// old clusters until their last Close.
		detached := *de
		n.ent = &detached
		fs.nodes.Orphan(n)
		oldDest = 0
	}
	destWasDir := de.isDir()
	take := func() { de.takeMoved(e) }
	if src == dst && src.oneSector(e, de) {
		take()
		de.encodeShort(dst.data[de.slot*32 : de.slot*32+32])
		src.erase(e)
		if err := src.writeSlots(min(e.firstSlot(), de.slot), max(e.slot, de.slot)+1); err != nil {
			return nil, err
		}
	} else {
		if err := src.markMoving(e); err != nil {
			return nil, err
		}
		if err := fs.barrier(); err != nil { // as in moveEntry
			return nil, err
		}
		take()
		if err := dst.update(de); err != nil {
			return nil, err
		}
		if err := fs.barrier(); err != nil { // as in moveEntry
			return nil, err
		}
		if err := src.remove(e); err != nil {
			return nil, err
		}
	}
	if oldDest != 0 {
		if destWasDir {
			delete(fs.dirs, oldDest)
		}
		fs.freeChain(oldDest)
		if err := fs.flushFAT(); err != nil {
			return nil, err
		}
	}
	if de.name == name {
		return de, nil
	}
	if done, err := dst.respell(de, name); done || err != nil {
		return de, err
	}
	return fs.moveEntry(dst, de, dst, name)
}

// markMoving writes e's 8.3 slot with the rename mark set.
func (d *dirCache) markMoving(e *entry) error {
	e.nt |= ntMoving
	return d.update(e)
}

// shortFor chooses the short name for a new entry called name and says how
// many slots it needs.
func (d *dirCache) shortFor(name string, exclude *entry) (shortName, byte, int, error) {
	short, nt, needLFN, err := makeShortName(name, func(s shortName) bool {
		o, ok := d.shorts[s]
		return ok && o != exclude
	})
	if err != nil {
		return short, 0, 0, err
	}
	k := 1
	if needLFN {
		k += lfnSlots(name)
	}
	return short, nt, k, nil
}

// encodeNew fills slots s..s+k-1 (found by place) with an entry called
// name carrying tmpl's metadata, and indexes it; nothing is written.
func (d *dirCache) encodeNew(name string, tmpl *entry, short shortName, nt byte, s, k int) *entry {
	e := &entry{}
	*e = *tmpl
	e.dir, e.name, e.key, e.short, e.nt = d, name, foldName(name), short, nt
	e.slot, e.nslots = s+k-1, k
	e.node, e.pending = nil, false
	e.damage, e.damageKind, e.dup = "", damageNone, false
	if k > 1 {
		encodeLFN(d.data[s*32:(s+k-1)*32], name, lfnChecksum(short))
	}
	e.encodeShort(d.data[e.slot*32 : e.slot*32+32])
	d.index(e)
	return e
}
