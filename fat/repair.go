package fat

import (
	"fmt"
	"strings"
)

// check runs the checker and, with level above repairNone, the repairs:
// entry fixes in passes (each pass walks the volume afresh, so what one fix
// uncovers is found by the next), then the FAT fixes, then a last walk
// whose report becomes After.
func (fs *FS) check(level repairLevel) (rep *CheckReport, err error) {
	if level != repairNone {
		if err := fs.canWrite(); err != nil {
			return nil, err
		}
		if fs.nodes.Open() > 0 {
			return nil, fmt.Errorf("fat: check: close the %d open files before repairing", fs.nodes.Open())
		}
	}
	if fs.w != nil && fs.err == nil {
		if err := fs.sync(); err != nil {
			return nil, err
		}
	}
	if level == repairNone {
		t, err := fs.diskFAT()
		if err != nil {
			return nil, err
		}
		c := newChecker(fs, t)
		if err := c.run(); err != nil {
			return nil, err
		}
		return c.r, nil
	}

	// A look first: a clean volume is left untouched.
	t0, err := fs.diskFAT()
	if err != nil {
		return nil, err
	}
	c0 := newChecker(fs, t0)
	if err := c0.run(); err != nil {
		return nil, err
	}
	if c0.r.Clean() {
		fs.verified = true
		after := *c0.r
		c0.r.After = &after
		return c0.r, nil
	}

	fs.repairing = true
	// Repairs work on the FAT as it is on disk, and on directories read
	// afresh: the caches are dropped now and rebuilt at the end, whatever
	// happens in between.
	t, err := fs.diskFAT()
	if err != nil {
		return nil, err
	}
	t.next = fs.fat.next
	fs.fat = t
	fs.dirs = make(map[uint32]*dirCache)
	defer func() {
		fs.repairing = false
		if rerr := fs.reloadRoot(); err == nil {
			err = rerr
		}
	}()

	c := newChecker(fs, fs.fat)
	if err := c.run(); err != nil {
		return nil, err
	}
	rep = c.r
	for pass := 0; ; pass++ {
		changed, err := c.fixEntries(level, rep)
		if err != nil {
			return rep, err
		}
		if !changed {
			break
		}
		c = newChecker(fs, fs.fat)
		if err := c.run(); err != nil {
			return rep, err
		}
		if pass == 8 {
			break // what is left is reported in After
		}
	}
	if err := c.fixFAT(level, rep); err != nil {
		return rep, err
	}
	if err := fs.sync(); err != nil {
		return rep, err
	}
	if rep.Dirty && len(rep.Repaired) == 0 {
		rep.Repaired = append(rep.Repaired, "nothing was left half-way: the volume is marked clean again")
	}
	fs.unrecovered = false

	after := newChecker(fs, fs.fat)
	if err := after.run(); err != nil {
		return rep, err
	}
	if len(after.r.CrossLinks) > 0 {
		if err := fs.setNeedsRepair(); err != nil {
			return rep, err
		}
	} else {
		fs.verified = true
		if level == repairAll {
			if fs.markedBad {
				rep.Repaired = append(rep.Repaired, "cleared the volume's needs-repair flag")
			}
			if err := fs.clearNeedsRepair(); err != nil {
				return rep, err
			}
		}
	}
	after.r.MarkedDamaged = fs.markedBad
	rep.After = after.r
	// Everything is on disk and consistent: the volume can say so.
	return rep, fs.markVolumeClean()
}

// reloadRoot drops the directory caches and reads the root again.
func (fs *FS) reloadRoot() error {
	fs.dirs = make(map[uint32]*dirCache)
	root, err := fs.loadRoot()
	if err != nil {
		return err
	}
	fs.root = root
	return nil
}

// fixEntries applies the entry-level fixes level allows, at most one per
// entry (the next pass finds what is left), and reports whether it changed
// anything.
func (c *checker) fixEntries(level repairLevel, rep *CheckReport) (bool, error) {
	changed := false
	note := func(format string, args ...any) {
		rep.Repaired = append(rep.Repaired, fmt.Sprintf(format, args...))
		changed = true
	}
	touched := make(map[*entry]bool)
	touch := func(es ...*entry) bool {
		for _, e := range es {
			if e != nil && touched[e] {
				return false
			}
		}
		for _, e := range es {
			if e != nil {
				touched[e] = true
			}
		}
		return true
	}

	// Interrupted renames: the marked source is the stale one.
	for _, rs := range c.renames {
		m := c.owners[rs.marked]
		if rs.twin >= 0 {
			tw := c.owners[rs.twin]
			if !touch(m.ent, tw.ent) {
				continue
			}
			if err := m.dir.remove(m.ent); err != nil {
				return changed, err
			}
			note("completed the rename of %s to %s", m.where(), tw.where())
			continue
		}
		if !touch(m.ent) {
			continue
		}
		m.ent.nt &^= ntMoving
		if err := m.dir.update(m.ent); err != nil {
			return changed, err
		}
		note("%s: cleared the mark of a rename that had not happened", m.where())
	}

	// "." and "..": a directory moved by an interrupted rename still names
	// its old parent.
	for _, df := range c.dots {
		if df.dir.garbage && level < repairAll {
			continue
		}
		e := &entry{}
		p := df.dir.data[df.slot*32 : df.slot*32+32]
		e.decodeShort(p)
		e.start = df.start
		e.encodeShort(p)
		if err := df.dir.writeSlots(df.slot, df.slot+1); err != nil {
			return changed, err
		}
		note("%s: %q now points to cluster %d", df.dir.path(), [2]string{".", ".."}[df.slot], df.start)
	}

	// Orphaned long-name slots (a crash between the two writes of a
	// removal leaves them) are erased; so are, in a full repair, dot
	// entries and volume labels out of place.
	for _, d := range c.dirs {
		slots := append([]int(nil), d.orphanSlots...)
		if level == repairAll {
			slots = append(slots, d.straySlots...)
		}
		if len(slots) == 0 || d.garbage && level < repairAll {
			continue
		}
		lo, hi := d.slots(), 0
		for _, i := range slots {
			d.data[i*32] = slotDeleted
			lo, hi = min(lo, i), max(hi, i+1)
		}
		if err := d.writeSlots(lo, hi); err != nil {
			return changed, err
		}
		note("%s: erased %d orphaned long-name slots or entries out of place", d.path(), len(slots))
	}
	// A chain that runs into a free cluster is what an interrupted
	// session leaves when a chain grows: recovery cuts it there.
	for _, f := range c.fixes {
		if !f.crash || !touch(f.ent) {
			continue
		}
		if f.dir != nil && f.dir.garbage && level < repairAll {
			continue
		}
		if err := c.applyFix(f, note); err != nil {
			return changed, err
		}
	}
	if level < repairAll {
		return changed, nil
	}

	// End marks with entries after them become deleted slots: the entries
	// are then seen (and checked, next pass) by everyone alike.
	for _, d := range c.dirs {
		if len(d.hiddenEnds) == 0 {
			continue
		}
		for _, i := range d.hiddenEnds {
			d.data[i*32] = slotDeleted
		}
		if err := d.writeSlots(d.hiddenEnds[0], d.hiddenEnds[len(d.hiddenEnds)-1]+1); err != nil {
			return changed, err
		}
		note("%s: the end-of-directory mark moved past the %s after it", d.path(), "slots in use")
	}

	for _, f := range c.fixes {
		if !touch(f.ent) {
			continue
		}
		if err := c.applyFix(f, note); err != nil {
			return changed, err
		}
	}
	for _, x := range c.cross {
		first, second := c.owners[x.first], c.owners[x.second]
		if !touch(first.ent, second.ent) {
			continue
		}
		if err := c.resolveCrossLink(x, note); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// applyFix repairs one damaged entry.
func (c *checker) applyFix(f entryFix, note func(string, ...any)) error {
	fs := c.fs
	cs := int64(fs.g.clusterSize)
	e, d := f.ent, f.dir
	if d != nil && d.garbage && f.kind != fixCut && f.kind != fixSize && f.kind != fixDirSize {
		// Among garbage, a damaged entry is garbage too.
		note("%s: erased (a damaged entry in a directory of garbage)", f.path)
		return d.remove(e)
	}
	switch f.kind {
	case fixSizeNoCluster:
		e.size = 0
		note("%s: had a size but no cluster, now empty", f.path)
		return d.update(e)
	case fixBadStart, fixDirNoCluster:
		if e.isDir() {
			note("%s: erased (a directory without a valid cluster)", f.path)
			return d.remove(e)
		}
		e.start, e.size = 0, 0
		note("%s: its first cluster was outside the volume, now empty", f.path)
		return d.update(e)
	case fixDirSize:
		e.size = 0
		note("%s: directory size set to 0", f.path)
		return d.update(e)
	case fixSize:
		e.size = uint32(int64(f.keep.N) * cs)
		note("%s: size cut to its chain, %d bytes", f.path, e.size)
		return d.update(e)
	case fixCut:
		return c.cut(f.o, f.keep, note, "chain cut where it broke")
	case fixName, fixDup:
		return c.rename(f, note)
	}
	return nil
}

// cut keeps the clusters in keep of owner o and drops the rest of its
// chain (freed later as lost clusters unless someone else owns them). The
// entry is written first (its size first cut to what is kept), then the
// FAT, so a crash in between leaves a chain longer than its file.
func (c *checker) cut(o int32, keep chain, note func(string, ...any), why string) error {
	fs := c.fs
	ow := c.owners[o]
	e := ow.ent
	if keep.N == 0 {
		switch {
		case e == nil:
			return nil // the FAT32 root: nothing can be kept, nothing done
		case e.isDir():
			note("%s: erased (%s before its first cluster)", ow.where(), why)
			return ow.dir.remove(e)
		}
		e.start, e.size = 0, 0
		note("%s: now empty (%s before its first cluster)", ow.where(), why)
		return ow.dir.update(e)
	}
	if e != nil && !e.isDir() {
		if max := int64(keep.N) * int64(fs.g.clusterSize); int64(e.size) > max {
			e.size = uint32(max)
			if err := ow.dir.update(e); err != nil {
				return err
			}
		}
	}
	fs.fat.set(keep.Last(), fs.fat.eocMark())
	note("%s: %s, %s kept", ow.where(), why, plural(keep.N, "cluster"))
	return fs.flushFAT()
}

// resolveCrossLink gives the two owners of shared clusters one each. A
// file yields to a directory; of two files, the second (in walk order)
// gets a copy of the shared clusters, or is cut before them when there is
// no room; of two directories, the second loses its entry (when all of it
// is shared: it is the same directory twice) or its shared tail.
func (c *checker) resolveCrossLink(x crossLink, note func(string, ...any)) error {
	first, second := c.owners[x.first], c.owners[x.second]
	victim, prefix, other := x.second, x.prefix, first
	if first.ent != nil && !first.isDir && second.isDir {
		victim, other = x.first, second
		prefix = c.prefixOf(first.start, x.shared)
	}
	v := c.owners[victim]
	if v.ent == nil {
		return nil // a removed open file: repair does not run with open files
	}
	if v.isDir {
		if prefix.N == 0 {
			note("%s: erased, it was a second entry of %s", v.where(), other.where())
			return v.dir.remove(v.ent)
		}
		return c.cut(victim, prefix, note, "cut before the clusters it shared with "+other.where())
	}
	return c.cloneShared(victim, prefix, x.shared, other.where(), note)
}

// prefixOf returns the clusters of the chain at start before cluster at.
func (c *checker) prefixOf(start, at uint32) chain {
	var ch chain
	t := c.fat
	for cur, steps := start, uint32(0); t.valid(cur) && cur != at && steps < t.count; steps++ {
		ch.Add(run{First: cur, Count: 1})
		v := t.get(cur)
		if t.isEOC(v) || !t.valid(v) {
			break
		}
		cur = v
	}
	return ch
}

// cloneShared gives file owner o (its own clusters are prefix) a copy of
// the shared clusters from shared on, as many as its size needs: the copy
// is written, then linked into the FAT, then the file switched to it (one
// write), so a crash leaves either the shared chain or the copy plus lost
// clusters. Without room for the copy the file is cut before the shared
// clusters, as fsck.fat does.
func (c *checker) cloneShared(o int32, prefix chain, shared uint32, with string, note func(string, ...any)) error {
	fs := c.fs
	t := fs.fat
	v := c.owners[o]
	e := v.ent
	cs := int64(fs.g.clusterSize)
	need := uint32((int64(e.size) + cs - 1) / cs)
	if need <= prefix.N {
		return c.cut(o, prefix, note, "its size ends before the clusters it shared with "+with+"; chain cut there")
	}
	var src chain
	for cur, steps := shared, uint32(0); src.N < need-prefix.N && t.valid(cur) && steps < t.count; steps++ {
		src.Add(run{First: cur, Count: 1})
		nx := t.get(cur)
		if t.isEOC(nx) || !t.valid(nx) {
			break
		}
		cur = nx
	}
	if src.N > t.available() || v.dir.garbage {
		return c.cut(o, prefix, note, "cut before the clusters it shared with "+with+" (no room to copy them)")
	}
	runs, err := fs.allocate(src.N, 0)
	if err != nil {
		return err
	}
	var dst chain
	for _, r := range runs {
		dst.Add(r)
	}
	if err := fs.copyClusters(dst, src); err != nil {
		return err
	}
	if err := fs.flushFAT(); err != nil {
		return err
	}
	note("%s: given its own copy of the %s it shared with %s", v.where(), plural(src.N, "cluster"), with)
	if prefix.N == 0 {
		e.start = dst.First()
		return v.dir.update(e)
	}
	t.set(prefix.Last(), dst.First())
	return fs.flushFAT()
}

// copyClusters copies the clusters of src into those of dst (as long),
// a run of up to 1 MiB at a time.
func (fs *FS) copyClusters(dst, src chain) error {
	cs := uint32(fs.g.clusterSize)
	batch := max(1, (1<<20)/cs)
	buf := make([]byte, batch*cs)
	for i := uint32(0); i < src.N; {
		sc, sk := src.At(i)
		dc, dk := dst.At(i)
		k := min(sk, dk, batch, src.N-i)
		b := buf[:k*cs]
		if err := fs.readAt(b, fs.g.clusterOffset(sc)); err != nil {
			return err
		}
		if err := fs.writeAt(b, fs.g.clusterOffset(dc)); err != nil {
			return err
		}
		i += k
	}
	return nil
}

// rename gives a damaged or duplicated entry a valid, unique name: the
// forbidden characters become '_', a clashing name gets " (2)" (or the
// next free number) before its extension. A one-slot entry whose new name
// is a plain 8.3 name is rewritten in place; any other goes through the
// same steps as Rename (marked source, new entry, source erased).
func (c *checker) rename(f entryFix, note func(string, ...any)) error {
	d, e := f.dir, f.ent
	name := strings.Map(func(r rune) rune {
		if r == '?' {
			return '_'
		}
		return r
	}, e.name)
	name = strings.TrimRight(name, ". ")
	if name == "" {
		name = "_"
	}
	if f.kind == fixDup || d.lookup(name) != nil && d.lookup(name) != e || checkName(name) != nil {
		name = freeName(d, name, e)
	}
	old := f.path
	if short, nt, needLFN, err := makeShortName(name, func(s shortName) bool {
		o, ok := d.shorts[s]
		return ok && o != e
	}); err == nil && !needLFN && e.nslots == 1 {
		d.unindex(e)
		e.name, e.key, e.short, e.nt = name, foldName(name), short, nt|e.nt&ntMoving
		e.damage, e.damageKind, e.dup = "", damageNone, false
		d.index(e)
		note("%s: renamed %s", old, name)
		return d.update(e)
	}
	if _, err := c.fs.moveEntry(d, e, d, name); err != nil {
		return err
	}
	note("%s: renamed %s", old, name)
	return nil
}

// freeName returns name, or name with " (N)" before its extension, that
// no entry of d other than self has, and that is a valid name.
func freeName(d *dirCache, name string, self *entry) string {
	stem, ext := name, ""
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		stem, ext = name[:i], name[i:]
	}
	for n := 2; ; n++ {
		cand := fmt.Sprintf("%s (%d)%s", stem, n, ext)
		if o := d.lookup(cand); (o == nil || o == self) && checkName(cand) == nil {
			return cand
		}
	}
}

// fixFAT applies the FAT-level repairs found by the last walk: chains cut
// to their files' sizes, lost clusters freed, the FAT copies made equal,
// the FSInfo count set right.
func (c *checker) fixFAT(level repairLevel, rep *CheckReport) error {
	fs := c.fs
	t := fs.fat
	// Entries of empty files that still point at clusters are rewritten
	// first, then the FAT is changed, so a crash in between leaves only
	// lost clusters.
	long := c.long[:0:0]
	for _, lc := range c.long {
		if !lc.dir.garbage || level == repairAll {
			long = append(long, lc) // recovery writes nothing into garbage
		}
	}
	for _, lc := range long {
		if lc.keep == 0 {
			e := lc.ent
			start := e.start
			e.start = 0
			if err := lc.dir.update(e); err != nil {
				return err
			}
			e.start = start
		}
	}
	for _, lc := range long {
		e := lc.ent
		if lc.keep == 0 {
			t.releaseChain(e.start)
			continue
		}
		cl := e.start
		for i := uint32(1); i < lc.keep; i++ {
			cl, _, _ = t.follow(cl)
		}
		next := t.get(cl)
		t.set(cl, t.eocMark())
		if t.valid(next) {
			t.releaseChain(next)
		}
	}
	if len(long) > 0 {
		rep.Repaired = append(rep.Repaired, fmt.Sprintf("cut %d chains to their file sizes", len(long)))
	}
	lost := c.lost
	if c.partial && level < repairAll {
		// A directory was not read whole: what looks lost may be its
		// files. Recovery leaves them allocated; a full repair decides.
		lost = nil
	}
	for _, cl := range lost {
		t.set(cl, 0)
		t.free++
	}
	if len(lost) > 0 {
		rep.Repaired = append(rep.Repaired, fmt.Sprintf("freed %d lost clusters", len(lost)))
	}
	if c.r.FATMismatch > 0 {
		t.markDirty(0, len(t.raw)-1) // every sector goes to every copy
		rep.Repaired = append(rep.Repaired, "rewrote all FAT copies from the first")
	}
	if err := fs.flushFAT(); err != nil {
		return err
	}
	if c.r.FreeCountWrong {
		// Written by the sync that follows.
		fs.infoStale, fs.modified = true, true
		rep.Repaired = append(rep.Repaired, "corrected the FSInfo free cluster count")
	}
	return nil
}

// plural says "1 cluster" or "n clusters".
func plural(n uint32, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
