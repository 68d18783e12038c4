package fat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// CheckReport is what Check found (and, with repair, fixed).
type CheckReport struct {
	Files, Dirs int
	// FileClusters and DirClusters count the clusters owned by files and
	// by directories (the FAT32 root included); OpenClusters those of
	// removed files that are still open (freed at their last Close).
	FileClusters, DirClusters, OpenClusters uint32
	// LostClusters are in use in the FAT but belong to no file or
	// directory; LostChains counts the chains they form. A crash during a
	// write leaves these; they waste space and nothing else.
	LostClusters uint32
	LostChains   int
	// CrossLinks names clusters claimed by two files or directories.
	CrossLinks []string
	// BadEntries are invalid directory entries, broken cluster chains,
	// files larger than their chain, wrong or missing "." and "..".
	BadEntries []string
	// LongChains are files whose chain has more clusters than their size
	// needs (what a crash while appending leaves).
	LongChains []string
	// Interrupted lists renames a crash interrupted: the source entry
	// still carries the mark Rename sets on it, with or without the new
	// entry beside it.
	Interrupted []string
	// OrphanLFN counts long-name slots that belong to no entry, and
	// StrayDots "." and ".." entries and volume labels out of place.
	OrphanLFN, StrayDots int
	// FATMismatch counts sectors in which a FAT copy differs from the one
	// in use.
	FATMismatch int
	// FreeCountWrong is set when the FAT32 FSInfo free-cluster count is
	// neither right nor marked unknown.
	FreeCountWrong bool
	// Dirty is set when the volume was not closed cleanly (its dirty flag
	// is set) and has not been recovered since.
	Dirty bool
	// MarkedDamaged is set when the volume's own flag says it needs repair
	// (set when cross-links were found while writing).
	MarkedDamaged bool
	// Repaired lists what Check(true) changed.
	Repaired []string
	// After is what a fresh check found once Check(true) was done: nil
	// without repair. After.Clean() means everything found was repaired.
	After *CheckReport
}

// Clean reports whether nothing at all was found.
func (r *CheckReport) Clean() bool {
	return r.LostClusters == 0 && len(r.CrossLinks) == 0 && len(r.BadEntries) == 0 &&
		len(r.LongChains) == 0 && len(r.Interrupted) == 0 && r.OrphanLFN == 0 && r.StrayDots == 0 &&
		r.FATMismatch == 0 && !r.FreeCountWrong && !r.Dirty && !r.MarkedDamaged
}

// Errors reports whether anything was found that can lose or damage data:
// cross-links or bad entries. Lost clusters, long chains, interrupted
// renames, orphaned long names, unequal FAT copies and a wrong free count
// are not.
func (r *CheckReport) Errors() bool {
	return len(r.CrossLinks) != 0 || len(r.BadEntries) != 0
}

// String summarises the report, one finding per line; after a repair,
// what is still wrong follows, indented.
func (r *CheckReport) String() string {
	t := fatcore.NewReportText(r.Files, r.Dirs)
	t.Flag(r.Dirty, "the volume was not closed cleanly (an operation was interrupted)")
	t.Flag(r.MarkedDamaged, "the volume is marked as needing repair")
	if r.LostClusters > 0 {
		t.Line(fmt.Sprintf("%d lost clusters in %d chains", r.LostClusters, r.LostChains))
	}
	t.Each("cross-linked", r.CrossLinks)
	t.Each("bad", r.BadEntries)
	t.Each("chain longer than file", r.LongChains)
	t.Each("interrupted", r.Interrupted)
	t.Count(uint64(r.OrphanLFN), "%d orphaned long-name slots")
	t.Count(uint64(r.StrayDots), `%d ".", ".." or volume label entries out of place`)
	t.Count(uint64(r.FATMismatch), "FAT copies differ in %d sectors")
	t.Flag(r.FreeCountWrong, "FSInfo free cluster count is wrong")
	t.Each("repaired", r.Repaired)
	if a := r.After; a != nil && !a.Clean() {
		t.Line("still wrong after repair:")
		for _, l := range strings.Split(strings.TrimSpace(a.String()), "\n")[1:] {
			t.Line("  " + l)
		}
	}
	return t.String()
}

// Check verifies the filesystem as it is on disk (after committing every
// pending change): every chain is followed, every cluster's owner
// recorded, the FAT copies compared.
//
// With repair it fixes what it found, the way fsck.fat -a does where that
// loses nothing and better where fsck.fat would drop data:
//   - an interrupted rename is completed (the marked source entry erased);
//   - cross-linked files each get their own copy of the shared clusters
//     (fsck.fat truncates the second file instead; that is done only when
//     there is no room for the copy); a directory sharing clusters with
//     another one loses its entry or the shared tail, never a file's data;
//   - a chain that loops, leaves the volume or runs into a free or bad
//     cluster is cut there and the file's size cut to what is left;
//   - a size larger than the chain is cut to the chain, a chain longer
//     than the size is cut to the size;
//   - a file whose size has no cluster becomes empty; an entry whose first
//     cluster is outside the volume becomes empty (a directory: erased);
//   - short names with forbidden characters (those of long names, and a
//     '.', as fsck.fat 4.2 has it) are replaced (the long name, if any, is
//     kept) and the second of two entries with the same name renamed
//     "NAME (2).EXT"; in a directory of garbage, damaged entries are
//     erased instead;
//   - wrong "." and ".." clusters are set right; stray dot entries, volume
//     labels out of place and orphaned long-name slots erased; an
//     end-of-directory mark with entries after it (which fsck.fat and
//     Linux read, Windows and this package do not) made a deleted slot, so
//     that everyone sees those entries, and they are checked like the rest;
//   - lost clusters are freed (fsck.fat -a does the same; this package
//     never leaves a file's only copy in lost clusters);
//   - all FAT copies are rewritten from the first, the FSInfo count fixed,
//     and the volume's dirty and needs-repair flags cleared.
//
// The report's After field is a fresh check made afterwards. Repair
// refuses to run while files are open. It may run on a filesystem that
// refuses other changes (ErrNeedsRepair): it is what lifts that.
func (fs *FS) Check(repair bool) (*CheckReport, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed {
		return nil, errClosed
	}
	level := repairNone
	if repair {
		level = repairAll
	}
	return fs.check(level)
}

// repairLevel says what check may change.
type repairLevel int

const (
	repairNone repairLevel = iota
	// repairInterrupted fixes exactly what an interrupted operation of this
	// package can leave: marked renames, lost clusters, long chains, a
	// moved directory's "..", orphaned long names, FAT copies, the FSInfo
	// count. Recovery of a dirty volume at Open uses it.
	repairInterrupted
	repairAll
)

// owner is a chain's owner: an entry (dir is the directory holding it), the
// FAT32 root (ent nil) or a removed file that is still open.
type owner struct {
	label string // for the FAT32 root and removed open files
	dir   *dirCache
	ent   *entry
	isDir bool
	start uint32
}

// where names the owner for messages (computed only when needed: a walk
// of a large tree should not build a path per file).
func (o owner) where() string {
	if o.ent == nil {
		return o.label
	}
	if p := o.dir.path(); p != "/" {
		return p + "/" + o.ent.name
	}
	return "/" + o.ent.name
}

// How a claimed chain ended.
const (
	stopEnd    = iota // end-of-chain mark
	stopShared        // ran into a cluster another owner claimed
	stopLoop          // ran into a cluster of its own chain
	stopBroken        // a free, bad or out-of-range link
)

type claim struct {
	ch    chain  // the clusters claimed, in order
	stop  int    // stopEnd, ...
	at    uint32 // stopShared, stopLoop: the cluster ran into
	other int32  // stopShared: its owner
	why   string // stopLoop, stopBroken
	// free: stopBroken at a link to a free cluster, which is what a
	// write cut short leaves when a chain grows (the link written, the
	// new cluster's end mark not yet).
	free bool
}

// crossLink is an owner (second) whose chain runs into clusters another
// (first) claimed before it; every cluster from there on is shared.
type crossLink struct {
	first, second int32
	prefix        chain  // second's own clusters before the shared one
	shared        uint32 // the first shared cluster
}

// entryFix is a damaged entry and what is wrong with it.
type entryFix struct {
	o    int32 // owner index, or -1 for an entry that owns no chain
	dir  *dirCache
	ent  *entry
	path string
	kind int
	keep chain // fixCut: the clusters to keep
	// crash: fixCut of a chain that runs into a free cluster. An
	// interrupted session leaves that, so recovery cuts it too.
	crash bool
}

// Kinds of entryFix.
const (
	fixSizeNoCluster = iota // a size without a first cluster: size 0
	fixBadStart             // first cluster outside the volume
	fixDirNoCluster         // a directory without a cluster
	fixCut                  // a broken chain: keep what is before the break
	fixSize                 // a file larger than its chain
	fixName                 // forbidden characters in the name
	fixDup                  // a second entry of the same name
	fixDirSize              // a directory entry with a non-zero size
)

// dotFix is a "." or ".." slot pointing at the wrong cluster.
type dotFix struct {
	dir   *dirCache
	slot  int
	start uint32
}

// checker walks the filesystem as it is on disk.
type checker struct {
	fs     *FS
	fat    *fatTable
	owner  []int32 // index into owners of each cluster's owner, -1 free
	owners []owner
	r      *CheckReport

	dirs    []*dirCache // every directory walked, parents first
	long    []longChain
	cross   []crossLink
	fixes   []entryFix
	marked  []int32 // owners whose entry carries the rename mark
	renames []renameState
	dots    []dotFix
	lost    []uint32

	quick bool // only the tree: no FAT copies, lost clusters or FSInfo
	// partial: some directory could not be read whole (a chain broken
	// by a bad link, shared with another owner, or unreadable), so
	// clusters that look lost may hold its files.
	partial bool
}

// renameState is an entry with the rename mark: the source of a rename a
// crash interrupted. twin is the new entry (the same first cluster), or -1
// when the rename had not written it yet, or for an empty file (whose new
// entry cannot be told from any other empty file: both are kept).
type renameState struct {
	marked, twin int32
}

type longChain struct {
	dir  *dirCache
	ent  *entry
	keep uint32
}

// diskFAT reads the FAT copy in use from disk.
func (fs *FS) diskFAT() (*fatTable, error) {
	g := fs.g
	copyIdx := 0
	if !g.mirrored {
		copyIdx = g.activeFAT
	}
	raw := make([]byte, g.fatSectors*int64(g.bytesPerSector))
	if err := fs.readAt(raw, g.fatCopyOffset(copyIdx)); err != nil {
		return nil, err
	}
	return newFATTable(g, raw), nil
}

func newChecker(fs *FS, t *fatTable) *checker {
	c := &checker{fs: fs, fat: t, r: &CheckReport{}}
	c.owner = make([]int32, t.count)
	for i := range c.owner {
		c.owner[i] = -1
	}
	return c
}

// run walks everything and fills the report and the lists repair uses.
func (c *checker) run() error {
	fs, g, r := c.fs, c.fs.g, c.r
	r.Dirty = fs.unrecovered
	r.MarkedDamaged = fs.markedBad

	// FAT copies.
	if g.mirrored && g.numFATs > 1 && !c.quick {
		other := make([]byte, len(c.fat.raw))
		ss := g.bytesPerSector
		for i := 1; i < g.numFATs; i++ {
			if err := fs.readAt(other, g.fatCopyOffset(i)); err != nil {
				return err
			}
			for s := 0; s < len(other); s += ss {
				if !bytes.Equal(c.fat.raw[s:s+ss], other[s:s+ss]) {
					r.FATMismatch++
				}
			}
		}
	}

	// The tree.
	root := &dirCache{fs: fs}
	if g.typ == FAT32 {
		o := c.newOwner(owner{label: "/", isDir: true, start: g.rootCluster})
		cl := c.claim(o, g.rootCluster)
		r.DirClusters += cl.ch.N
		root.noIndex = c.quick
		if cl.stop != stopEnd {
			r.BadEntries = append(r.BadEntries, "/: "+cl.why)
			if cl.ch.N > 0 {
				c.fixes = append(c.fixes, entryFix{o: o, path: "/", kind: fixCut, keep: cl.ch, crash: cl.free})
			}
		}
		if cl.stop != stopEnd && !cl.free {
			c.partial = true
		}
		if err := c.loadDir(root, cl.ch); err != nil {
			r.BadEntries = append(r.BadEntries, fmt.Sprintf("/: %v", err))
			root = nil
			c.partial = true
		}
	} else {
		root.fixed = true
		root.noIndex = c.quick
		root.data = make([]byte, g.rootDirBytes)
		if err := fs.readAt(root.data, g.rootDirOffset); err != nil {
			return err
		}
	}
	if root != nil {
		root.parse()
		c.walk(root, "")
	}
	c.findRenames()
	if c.quick {
		return nil
	}

	// Removed files still open own their clusters until closed; so does a
	// truncated file's previous chain until its next commit.
	for n := range fs.nodes.Orphans() {
		for _, start := range []uint32{n.ch.First(), n.oldStart} {
			if start != 0 {
				o := c.newOwner(owner{label: "(removed, still open)", start: start})
				r.OpenClusters += c.claim(o, start).ch.N
			}
		}
	}

	// Lost clusters: used in the FAT, owned by nobody.
	pointed := make(map[uint32]bool)
	for cl := uint32(2); cl < c.fat.count; cl++ {
		v := c.fat.get(cl)
		if v == 0 || c.fat.isBad(v) || c.owner[cl] >= 0 {
			continue
		}
		c.lost = append(c.lost, cl)
		if c.fat.valid(v) {
			pointed[v] = true
		}
	}
	r.LostClusters = uint32(len(c.lost))
	for _, cl := range c.lost {
		if !pointed[cl] {
			r.LostChains++
		}
	}
	if r.LostClusters > 0 && r.LostChains == 0 {
		r.LostChains = 1 // lost clusters forming only loops
	}

	// FSInfo: an unknown count (all ones) is fine, a wrong one is not.
	if g.typ == FAT32 && fs.fsInfoOK {
		var free uint32
		for cl := uint32(2); cl < c.fat.count; cl++ {
			if c.fat.get(cl) == 0 {
				free++
			}
		}
		b := make([]byte, 512)
		if err := fs.readAt(b, int64(g.fsInfoSector)*int64(g.bytesPerSector)); err == nil {
			if v := binary.LittleEndian.Uint32(b[488:]); v != 0xFFFFFFFF && v != free {
				r.FreeCountWrong = true
			}
		}
	}
	return nil
}

func (c *checker) newOwner(o owner) int32 {
	c.owners = append(c.owners, o)
	return int32(len(c.owners) - 1)
}

// claim records the clusters of the chain at start as owned by o, up to
// its end or to the first cluster that is free, bad, outside the volume or
// claimed already (by o itself: a loop; by another: a cross-link).
func (c *checker) claim(o int32, start uint32) claim {
	t := c.fat
	var cl claim
	cur := start
	if !t.valid(cur) {
		cl.stop, cl.why = stopBroken, fmt.Sprintf("first cluster %d outside 2..%d", cur, t.count-1)
		return cl
	}
	for {
		if w := c.owner[cur]; w >= 0 {
			cl.at = cur
			if w == o {
				cl.stop, cl.why = stopLoop, fmt.Sprintf("cluster chain loops back to cluster %d", cur)
			} else {
				cl.stop, cl.other = stopShared, w
			}
			return cl
		}
		v := t.get(cur)
		if v == 0 || t.isBad(v) {
			kind := "free"
			if v != 0 {
				kind = "bad"
			}
			cl.stop, cl.why = stopBroken, fmt.Sprintf("cluster %d is in the chain but marked %s", cur, kind)
			cl.free = v == 0
			return cl
		}
		c.owner[cur] = o
		cl.ch.Add(run{First: cur, Count: 1})
		if t.isEOC(v) {
			return cl
		}
		if !t.valid(v) {
			cl.stop, cl.why = stopBroken, fmt.Sprintf("cluster %d points to cluster %d, outside 2..%d", cur, v, t.count-1)
			return cl
		}
		cur = v
	}
}

// loadDir reads the clusters of ch into d (no more than a directory can
// hold).
func (c *checker) loadDir(d *dirCache, ch chain) error {
	cs := c.fs.g.clusterSize
	if int64(ch.N)*int64(cs) > maxDirSlots*32 {
		return corruptf("directory chain is %d clusters long, more than a directory can be", ch.N)
	}
	d.ch = ch
	d.data = make([]byte, int(ch.N)*cs)
	for _, r := range ch.Runs {
		off := int(r.Pos) * cs
		if err := c.fs.readAt(d.data[off:off+int(r.Count)*cs], c.fs.g.clusterOffset(r.First)); err != nil {
			return err
		}
	}
	return nil
}

// sortedEntries returns d's entries in slot order, so that walks (and
// which of two cross-linked files counts as the first) are repeatable.
func sortedEntries(d *dirCache) []*entry {
	if d.noIndex {
		es := d.list
		sort.Slice(es, func(i, j int) bool { return es[i].slot < es[j].slot })
		return es
	}
	es := make([]*entry, 0, len(d.live)+len(d.damaged))
	for e := range d.live {
		es = append(es, e)
	}
	if d.garbage {
		es = append(es, d.damaged...)
	}
	sort.Slice(es, func(i, j int) bool { return es[i].slot < es[j].slot })
	return es
}

// walk checks every entry of directory d (at path p) and recurses.
func (c *checker) walk(d *dirCache, p string) {
	r := c.r
	r.Dirs++
	c.dirs = append(c.dirs, d)
	shown := p
	if shown == "" {
		shown = "/"
	}
	r.OrphanLFN += len(d.orphanSlots)
	r.StrayDots += len(d.straySlots)
	if len(d.hiddenEnds) > 0 {
		r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: slots in use after the end-of-directory mark (fsck.fat and Linux read them, Windows does not)", shown))
	}
	if d.parent != nil {
		if d.dotdot < 0 || len(d.data) < 64 || string(d.data[0:11]) != ".          " {
			r.BadEntries = append(r.BadEntries, shown+": missing \".\" or \"..\" entry")
		} else {
			c.checkDot(d, 0, d.firstCluster(), shown)
			want := d.parent.firstCluster()
			if d.parent.parent == nil {
				want = 0 // ".." of a top-level directory is 0, even on FAT32
			}
			c.checkDot(d, 1, want, shown)
		}
	}
	cs := int64(c.fs.g.clusterSize)
	for _, e := range sortedEntries(d) {
		o := c.newOwner(owner{dir: d, ent: e, isDir: e.isDir(), start: e.start})
		ep := c.owners[o].where
		if e.moving() {
			c.marked = append(c.marked, o)
		}
		if !e.isDir() {
			r.Files++
		}
		if e.damage != "" {
			r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: %s", ep(), e.damage))
			if e.damageKind == damageData {
				kind := fixSizeNoCluster
				switch {
				case e.start != 0:
					kind = fixBadStart
				case e.isDir():
					kind = fixDirNoCluster
				}
				c.fixes = append(c.fixes, entryFix{o: o, dir: d, ent: e, path: ep(), kind: kind})
				continue
			}
			c.fixes = append(c.fixes, entryFix{o: o, dir: d, ent: e, path: ep(), kind: fixName})
		} else if e.dup {
			r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: another entry has the same name", ep()))
			c.fixes = append(c.fixes, entryFix{o: o, dir: d, ent: e, path: ep(), kind: fixDup})
		}
		if e.isDir() {
			if e.size != 0 {
				r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: directory with a size of %d bytes", ep(), e.size))
				c.fixes = append(c.fixes, entryFix{o: o, dir: d, ent: e, path: ep(), kind: fixDirSize})
			}
			cl := c.claim(o, e.start)
			r.DirClusters += cl.ch.N
			if !c.noteClaim(o, cl) {
				// What the directory's own clusters hold is still
				// read: its files must be owned, or they would count
				// as lost clusters and be freed.
				c.partial = c.partial || !cl.free
				if cl.stop == stopShared || cl.ch.N == 0 {
					continue
				}
			}
			sub := &dirCache{fs: c.fs, parent: d, self: e, noIndex: c.quick}
			if err := c.loadDir(sub, cl.ch); err != nil {
				r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: %v", ep(), err))
				c.partial = true
				continue
			}
			sub.parse()
			c.walk(sub, ep())
			continue
		}
		if e.start == 0 {
			continue
		}
		cl := c.claim(o, e.start)
		r.FileClusters += cl.ch.N
		if !c.noteClaim(o, cl) {
			continue
		}
		n := int64(cl.ch.N)
		need := (int64(e.size) + cs - 1) / cs
		switch {
		case n < need:
			r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: size %d needs %d clusters, chain has %d", ep(), e.size, need, n))
			c.fixes = append(c.fixes, entryFix{o: o, dir: d, ent: e, path: ep(), kind: fixSize, keep: cl.ch})
		case n > need:
			r.LongChains = append(r.LongChains, fmt.Sprintf("%s: size %d needs %d clusters, chain has %d", ep(), e.size, need, n))
			c.long = append(c.long, longChain{dir: d, ent: e, keep: uint32(need)})
		}
	}
}

// findRenames pairs every entry carrying the rename mark with the new
// entry its rename wrote, if any: the one sharing its first cluster. Such
// a pair is what Rename leaves for the moment between its two directory
// writes, so it is reported as an interrupted rename, not as a cross-link.
func (c *checker) findRenames() {
	isMarked := make(map[int32]bool, len(c.marked))
	for _, o := range c.marked {
		isMarked[o] = true
	}
	pairs := make(map[int32]int32)
	var rest []crossLink
	for _, x := range c.cross {
		f, s := c.owners[x.first], c.owners[x.second]
		twin := x.prefix.N == 0 && f.start == s.start && x.shared == s.start && s.ent != nil && f.ent != nil
		switch {
		case twin && isMarked[x.first] && !isMarked[x.second]:
			pairs[x.first] = x.second
		case twin && isMarked[x.second] && !isMarked[x.first]:
			pairs[x.second] = x.first
		default:
			rest = append(rest, x)
			continue
		}
	}
	c.cross = rest
	c.r.CrossLinks = c.r.CrossLinks[:0]
	for _, x := range rest {
		c.r.CrossLinks = append(c.r.CrossLinks, fmt.Sprintf("%s and %s share cluster %d", c.owners[x.first].where(), c.owners[x.second].where(), x.shared))
	}
	for _, o := range c.marked {
		st := renameState{marked: o, twin: -1}
		if t, ok := pairs[o]; ok {
			st.twin = t
			c.r.Interrupted = append(c.r.Interrupted, fmt.Sprintf("rename of %s to %s", c.owners[o].where(), c.owners[t].where()))
		} else {
			c.r.Interrupted = append(c.r.Interrupted, fmt.Sprintf("%s: rename mark left by an interrupted rename", c.owners[o].where()))
		}
		c.renames = append(c.renames, st)
	}
}

// noteClaim records what is wrong with a claimed chain and reports whether
// it ended normally.
func (c *checker) noteClaim(o int32, cl claim) bool {
	r := c.r
	p := c.owners[o].where()
	switch cl.stop {
	case stopShared:
		r.CrossLinks = append(r.CrossLinks, fmt.Sprintf("%s and %s share cluster %d", c.owners[cl.other].where(), p, cl.at))
		c.cross = append(c.cross, crossLink{first: cl.other, second: o, prefix: cl.ch, shared: cl.at})
		return false
	case stopLoop, stopBroken:
		r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: %s", p, cl.why))
		ow := c.owners[o]
		c.fixes = append(c.fixes, entryFix{o: o, dir: ow.dir, ent: ow.ent, path: p, kind: fixCut, keep: cl.ch, crash: cl.free})
		return false
	}
	return true
}

// checkDot records a "." or ".." slot of d whose cluster is not want.
func (c *checker) checkDot(d *dirCache, slot int, want uint32, shown string) {
	e := &entry{}
	e.decodeShort(d.data[slot*32 : slot*32+32])
	if c.fs.g.typ != FAT32 {
		e.start &= 0xFFFF
	}
	if e.start == want {
		return
	}
	name := [2]string{".", ".."}[slot]
	c.r.BadEntries = append(c.r.BadEntries, fmt.Sprintf("%s: %q points to cluster %d, not %d", shown, name, e.start, want))
	c.dots = append(c.dots, dotFix{dir: d, slot: slot, start: want})
}
