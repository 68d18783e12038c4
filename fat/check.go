package fat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
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
	// files larger than their chain, missing "." or "..".
	BadEntries []string
	// LongChains are files whose chain has more clusters than their size
	// needs (what a crash while appending leaves).
	LongChains []string
	// OrphanLFN counts long-name slots that belong to no entry.
	OrphanLFN int
	// FATMismatch counts sectors in which a FAT copy differs from the one
	// in use.
	FATMismatch int
	// FreeCountWrong is set when the FAT32 FSInfo free-cluster count is
	// neither right nor marked unknown.
	FreeCountWrong bool
	// Repaired lists what Check(true) changed.
	Repaired []string
}

// Clean reports whether nothing at all was found.
func (r *CheckReport) Clean() bool {
	return r.LostClusters == 0 && len(r.CrossLinks) == 0 && len(r.BadEntries) == 0 &&
		len(r.LongChains) == 0 && r.OrphanLFN == 0 && r.FATMismatch == 0 && !r.FreeCountWrong
}

// Errors reports whether anything was found that can lose or damage data:
// cross-links or bad entries. Lost clusters, long chains, orphaned long
// names, unequal FAT copies and a wrong free count are not.
func (r *CheckReport) Errors() bool {
	return len(r.CrossLinks) != 0 || len(r.BadEntries) != 0
}

// String summarises the report, one finding per line.
func (r *CheckReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d files, %d directories\n", r.Files, r.Dirs)
	if r.LostClusters > 0 {
		fmt.Fprintf(&b, "%d lost clusters in %d chains\n", r.LostClusters, r.LostChains)
	}
	for _, s := range r.CrossLinks {
		fmt.Fprintf(&b, "cross-linked: %s\n", s)
	}
	for _, s := range r.BadEntries {
		fmt.Fprintf(&b, "bad: %s\n", s)
	}
	for _, s := range r.LongChains {
		fmt.Fprintf(&b, "chain longer than file: %s\n", s)
	}
	if r.OrphanLFN > 0 {
		fmt.Fprintf(&b, "%d orphaned long-name slots\n", r.OrphanLFN)
	}
	if r.FATMismatch > 0 {
		fmt.Fprintf(&b, "FAT copies differ in %d sectors\n", r.FATMismatch)
	}
	if r.FreeCountWrong {
		b.WriteString("FSInfo free cluster count is wrong\n")
	}
	for _, s := range r.Repaired {
		fmt.Fprintf(&b, "repaired: %s\n", s)
	}
	return b.String()
}

// checker walks the filesystem as it is on disk.
type checker struct {
	fs     *FS
	fat    *fatTable // read from disk
	owner  []int32   // index into paths of the owner of each cluster, -1 free
	paths  []string
	report *CheckReport
	long   []longChain // repairable long chains
}

type longChain struct {
	dir  *dirCache
	ent  *entry
	keep uint32
}

// Check verifies the filesystem as it is on disk (after committing every
// pending change): every chain is followed, every cluster's owner
// recorded, and the FAT copies compared. With repair, it frees lost
// clusters, cuts chains longer than their files, rewrites all FAT copies
// from the one in use and corrects the FSInfo free count; it refuses to
// repair while files are open. Other findings are reported, not changed.
func (fs *FS) Check(repair bool) (*CheckReport, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed {
		return nil, errClosed
	}
	if repair {
		if err := fs.writable(); err != nil {
			return nil, err
		}
		if fs.openNodes > 0 {
			return nil, fmt.Errorf("fat: check: close the %d open files before repairing", fs.openNodes)
		}
	}
	if fs.w != nil && fs.err == nil {
		if err := fs.sync(); err != nil {
			return nil, err
		}
	}
	g := fs.g
	copyIdx := 0
	if !g.mirrored {
		copyIdx = g.activeFAT
	}
	raw := make([]byte, g.fatSectors*int64(g.bytesPerSector))
	if err := fs.readAt(raw, g.fatCopyOffset(copyIdx)); err != nil {
		return nil, err
	}
	c := &checker{fs: fs, fat: newFATTable(g, raw), report: &CheckReport{}}
	c.owner = make([]int32, c.fat.count)
	for i := range c.owner {
		c.owner[i] = -1
	}
	r := c.report

	// FAT copies.
	if g.mirrored && g.numFATs > 1 {
		other := make([]byte, len(raw))
		ss := g.bytesPerSector
		for i := 1; i < g.numFATs; i++ {
			if err := fs.readAt(other, g.fatCopyOffset(i)); err != nil {
				return nil, err
			}
			for s := 0; s < len(raw); s += ss {
				if !bytes.Equal(raw[s:s+ss], other[s:s+ss]) {
					r.FATMismatch++
				}
			}
		}
	}

	// The tree.
	root := &dirCache{fs: fs}
	if g.typ == FAT32 {
		if n := c.claimChain("/", g.rootCluster); n > 0 {
			r.DirClusters += uint32(n)
		}
		if err := fs.loadDirData(root, g.rootCluster); err != nil {
			r.BadEntries = append(r.BadEntries, fmt.Sprintf("/: %v", err))
			root = nil
		}
	} else {
		root.fixed = true
		root.data = make([]byte, g.rootDirBytes)
		if err := fs.readAt(root.data, g.rootDirOffset); err != nil {
			return nil, err
		}
	}
	if root != nil {
		root.parse()
		c.walk(root, "")
	}

	// Removed files still open own their clusters until closed; so does a
	// truncated file's previous chain until its next commit.
	for n := range fs.orphans {
		for _, start := range []uint32{n.ch.first(), n.oldStart} {
			if start != 0 {
				if k := c.claimChain("(removed, still open)", start); k > 0 {
					r.OpenClusters += uint32(k)
				}
			}
		}
	}

	// Lost clusters: used in the FAT, owned by nobody.
	pointed := make(map[uint32]bool)
	var lost []uint32
	for cl := uint32(2); cl < c.fat.count; cl++ {
		v := c.fat.get(cl)
		if v == 0 || c.fat.isBad(v) || c.owner[cl] >= 0 {
			continue
		}
		lost = append(lost, cl)
		if c.fat.valid(v) {
			pointed[v] = true
		}
	}
	r.LostClusters = uint32(len(lost))
	for _, cl := range lost {
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

	if !repair || r.Clean() {
		return r, nil
	}
	return r, c.repair(lost)
}

// claimChain records the clusters of the chain at start as owned by path
// and returns how many there are, or -1 after reporting a broken chain or
// a cluster owned already (so a directory is never walked twice).
func (c *checker) claimChain(path string, start uint32) int64 {
	idx := int32(len(c.paths))
	c.paths = append(c.paths, path)
	r := c.report
	n := int64(0)
	cl := start
	for {
		if !c.fat.valid(cl) {
			r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: cluster %d outside 2..%d", path, cl, c.fat.count-1))
			return -1
		}
		if o := c.owner[cl]; o >= 0 {
			if o == idx {
				r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: cluster chain loops at cluster %d", path, cl))
			} else {
				r.CrossLinks = append(r.CrossLinks, fmt.Sprintf("%s and %s share cluster %d", c.paths[o], path, cl))
			}
			return -1
		}
		c.owner[cl] = idx
		n++
		next, end, err := c.fat.follow(cl)
		if err != nil {
			r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: %v", path, err))
			return -1
		}
		if end {
			return n
		}
		cl = next
	}
}

// walk checks every entry of directory d (at path p) and recurses.
func (c *checker) walk(d *dirCache, p string) {
	r := c.report
	r.Dirs++
	shown := p
	if shown == "" {
		shown = "/"
	}
	for _, b := range d.bad {
		r.BadEntries = append(r.BadEntries, shown+": "+b)
	}
	r.OrphanLFN += d.orphans
	if d.parent != nil && (d.dotdot < 0 || len(d.data) < 64 || string(d.data[0:11]) != ".          ") {
		r.BadEntries = append(r.BadEntries, shown+": missing \".\" or \"..\" entry")
	}
	cs := int64(c.fs.g.clusterSize)
	for e := range d.live {
		ep := p + "/" + e.name
		if e.isDir() {
			n := c.claimChain(ep, e.start)
			if n < 0 {
				continue
			}
			r.DirClusters += uint32(n)
			sub := &dirCache{fs: c.fs, parent: d, self: e}
			if err := c.fs.loadDirData(sub, e.start); err != nil {
				r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: %v", ep, err))
				continue
			}
			sub.parse()
			c.walk(sub, ep)
			continue
		}
		r.Files++
		if e.start == 0 {
			continue
		}
		n := c.claimChain(ep, e.start)
		if n < 0 {
			continue
		}
		r.FileClusters += uint32(n)
		need := (int64(e.size) + cs - 1) / cs
		switch {
		case n < need:
			r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: size %d needs %d clusters, chain has %d", ep, e.size, need, n))
		case n > need:
			r.LongChains = append(r.LongChains, fmt.Sprintf("%s: size %d needs %d clusters, chain has %d", ep, e.size, need, n))
			c.long = append(c.long, longChain{dir: d, ent: e, keep: uint32(need)})
		}
	}
}

// repair applies the fixes Check may make, on top of the FAT read from disk.
func (c *checker) repair(lost []uint32) error {
	fs, r := c.fs, c.report
	t := c.fat
	// Entries of empty files that still point at clusters are rewritten
	// first, then the FAT is changed, so a crash in between leaves only
	// lost clusters.
	for _, lc := range c.long {
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
	for _, lc := range c.long {
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
	if len(c.long) > 0 {
		r.Repaired = append(r.Repaired, fmt.Sprintf("cut %d chains to their file sizes", len(c.long)))
	}
	for _, cl := range lost {
		t.set(cl, 0)
		t.free++
	}
	if len(lost) > 0 {
		r.Repaired = append(r.Repaired, fmt.Sprintf("freed %d lost clusters", len(lost)))
	}
	if r.FATMismatch > 0 {
		t.markDirty(0, len(t.raw)-1) // every sector goes to every copy
		r.Repaired = append(r.Repaired, "rewrote all FAT copies from the first")
	}
	t.next = fs.fat.next
	fs.fat = t
	if err := fs.flushFAT(); err != nil {
		return err
	}
	if fs.g.typ == FAT32 && fs.fsInfoOK {
		if r.FreeCountWrong {
			r.Repaired = append(r.Repaired, "corrected the FSInfo free cluster count")
		}
		fs.infoStale = false
		if err := fs.writeFSInfo(t.free); err != nil {
			return err
		}
	}
	// Directory caches may hold entries changed above: start afresh.
	fs.dirs = make(map[uint32]*dirCache)
	root, err := fs.loadRoot()
	if err != nil {
		return err
	}
	fs.root = root
	return nil
}
