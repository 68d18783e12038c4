package exfat

import (
	"bytes"
	"fmt"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// CheckReport is what Check found (and, with repair, fixed).
type CheckReport struct {
	Files, Dirs int
	// FileClusters and DirClusters count the clusters owned by files and by
	// directories (the root included); SystemClusters those of the bitmap
	// and the up-case table; OpenClusters those of removed files that are
	// still open (freed at their last Close).
	FileClusters, DirClusters, SystemClusters, OpenClusters uint32
	// LostClusters are marked in use in the bitmap but belong to nothing. A
	// crash during a change leaves these; they waste space and nothing
	// else.
	LostClusters uint32
	// Unmarked names clusters that a file or directory owns but the bitmap
	// calls free: the next allocation could hand them out again.
	Unmarked []string
	// CrossLinks names clusters claimed by two files or directories.
	CrossLinks []string
	// Duplicates are entries whose clusters are exactly those of an entry
	// found before them: what a rename leaves when it stops between writing
	// the new entry and removing the old one. Check(true) removes the
	// second entry (the data stays, under the first name).
	Duplicates []string
	// BadEntries are entry sets that cannot be understood, broken or
	// looping chains, files larger than their allocation, duplicate names.
	BadEntries []string
	// BadChecksums are whole entry sets whose SetChecksum or NameHash is
	// wrong.
	BadChecksums []string
	// LongChains are fragmented files whose FAT chain goes on past what
	// their size needs (what a crash while appending leaves).
	LongChains []string
	// OrphanEntries counts secondary entries in use that follow no file
	// entry (what a crash while removing a set that spans sectors leaves).
	OrphanEntries int
	// Dirty is set when VolumeDirty was set: the volume was not closed
	// cleanly.
	Dirty bool
	// BootProblems: the main boot region is damaged (the backup is in use),
	// or the backup differs from it.
	BootProblems []string
	// Repaired lists what Check(true) changed.
	Repaired []string
	repair   bool
}

// Clean reports whether nothing at all was found.
func (r *CheckReport) Clean() bool {
	return r.LostClusters == 0 && len(r.Unmarked) == 0 && len(r.CrossLinks) == 0 && len(r.Duplicates) == 0 && len(r.BadEntries) == 0 &&
		len(r.BadChecksums) == 0 && len(r.LongChains) == 0 && r.OrphanEntries == 0 && !r.Dirty && len(r.BootProblems) == 0
}

// Errors reports whether anything was found that Check(true) cannot
// repair and that can lose or damage data: cross-links or bad entries.
func (r *CheckReport) Errors() bool {
	return len(r.CrossLinks) != 0 || len(r.BadEntries) != 0
}

// ExitCode is the outcome as fsck reports it: 0 when nothing was found, 1
// when Check(true) repaired everything it found, 3 when problems remain
// (any finding of Check(false), or what Check(true) cannot repair).
func (r *CheckReport) ExitCode() int {
	switch {
	case r.Clean():
		return 0
	case r.repair && !r.Errors():
		return 1
	}
	return 3
}

// String summarises the report, one finding per line.
func (r *CheckReport) String() string {
	t := fatcore.NewReportText(r.Files, r.Dirs)
	t.Flag(r.Dirty, "volume is marked dirty (not cleanly unmounted)")
	t.Each("boot region", r.BootProblems)
	t.Count(uint64(r.LostClusters), "%d lost clusters (in use in the bitmap, owned by nothing)")
	t.Each("in use but free in the bitmap", r.Unmarked)
	t.Each("cross-linked", r.CrossLinks)
	t.Each("duplicate", r.Duplicates)
	t.Each("bad", r.BadEntries)
	t.Each("wrong checksum", r.BadChecksums)
	t.Each("chain longer than file", r.LongChains)
	t.Count(uint64(r.OrphanEntries), "%d orphaned secondary entries")
	t.Each("repaired", r.Repaired)
	return t.String()
}

type checker struct {
	fs     *FS
	fat    *fatTable
	bm     *bitmap
	owner  []int32
	paths  []string
	chains []chain // by owner index
	dups   []dupEntry
	report *CheckReport
	long   []longChain
	sums   []*entry
	orph   []orphanSlot
}

type longChain struct {
	start, keep uint32 // first cluster; clusters the file needs
}

type dupEntry struct {
	dir *dirCache
	ent *entry
}

type orphanSlot struct {
	dir  *dirCache
	slot int
}

// Check verifies the filesystem as it is on disk, after committing every
// pending change: both boot regions, every entry set, every chain, the
// bitmap against the clusters actually owned. With repair it restores the
// boot regions from each other, rewrites wrong checksums and name hashes,
// marks orphaned secondary entries unused, cuts chains longer than their
// files, marks owned clusters in use and frees lost ones, and clears
// VolumeDirty; it refuses to repair while files are open. Cross-links and
// entries it cannot understand are reported, not changed.
func (fs *FS) Check(repair bool) (*CheckReport, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	r, err := fs.check(repair)
	if repair && err == nil {
		// What the repair left is judged again by the next change.
		fs.verified, fs.needsRepair = false, nil
	}
	return r, err
}

func (fs *FS) check(repair bool) (*CheckReport, error) {
	if fs.closed {
		return nil, errClosed
	}
	if repair {
		if fs.w == nil {
			return nil, ErrReadOnly
		}
		if fs.err != nil {
			return nil, fs.err
		}
		if fs.nodes.Open() > 0 {
			return nil, fmt.Errorf("exfat: check: close the %d open files before repairing", fs.nodes.Open())
		}
	}
	if fs.w != nil && fs.err == nil && !fs.fromBackup {
		if err := fs.sync(); err != nil {
			return nil, err
		}
	}
	g := fs.g
	r := &CheckReport{repair: repair, Dirty: g.flags&flagVolumeDirty != 0}
	if fs.fromBackup {
		r.BootProblems = append(r.BootProblems, "the main boot region is damaged; the backup region is in use")
	} else if diff, err := fs.backupDiffers(); err != nil {
		return nil, err
	} else if diff {
		r.BootProblems = append(r.BootProblems, "the backup boot region differs from the main one")
	}
	fatRaw := make([]byte, len(fs.fat.raw))
	if err := fs.readAt(fatRaw, g.activeFATOffset()); err != nil {
		return nil, err
	}
	bmRaw := make([]byte, len(fs.bm.raw))
	if err := fs.readChain(fs.bitmapCh, bmRaw, 0); err != nil {
		return nil, err
	}
	c := &checker{fs: fs, report: r,
		fat: newFATTable(fatRaw, g.clusterCount, g.sectorSize),
		bm:  newBitmap(bmRaw, g.clusterCount, g.sectorSize)}
	c.owner = make([]int32, int(g.clusterCount)+2)
	for i := range c.owner {
		c.owner[i] = -1
	}
	// Chains are followed in the FAT as it is on disk.
	live := fs.fat
	fs.fat = c.fat

	r.SystemClusters += c.claim("(allocation bitmap)", fs.bitmapCh)
	r.SystemClusters += c.claim("(up-case table)", fs.upcaseCh)
	rootCh, _, err := fs.loadChain(g.rootCluster, -1, false)
	if err != nil {
		fs.fat = live
		return nil, fmt.Errorf("root directory: %w", err)
	}
	r.DirClusters += c.claim("/", rootCh)
	root := &dirCache{fs: fs, ch: rootCh}
	if err := fs.readDirData(root); err != nil {
		fs.fat = live
		return nil, err
	}
	root.parse()
	c.walk(root, "")

	for n := range fs.nodes.Orphans() {
		r.OpenClusters += c.claim("(removed, still open)", n.ch)
		r.OpenClusters += c.claim("(removed, still open)", n.old)
	}

	var lost, unmarked []uint32
	for cl := uint32(2); cl < g.clusterCount+2; cl++ {
		inUse := c.bm.used(cl)
		switch owned := c.owner[cl] >= 0; {
		case inUse && !owned:
			lost = append(lost, cl)
		case owned && !inUse:
			unmarked = append(unmarked, cl)
			if len(r.Unmarked) < 20 {
				r.Unmarked = append(r.Unmarked, fmt.Sprintf("cluster %d of %s", cl, c.paths[c.owner[cl]]))
			}
		}
	}
	if len(unmarked) > len(r.Unmarked) {
		r.Unmarked = append(r.Unmarked, fmt.Sprintf("(and %d more clusters)", len(unmarked)-len(r.Unmarked)))
	}
	r.LostClusters = uint32(len(lost))
	fs.fat = live
	if !repair || r.Clean() {
		return r, nil
	}
	return r, c.repair(lost, unmarked)
}

// backupDiffers compares the two boot regions, VolumeFlags and
// PercentInUse aside (only the main one's change).
func (fs *FS) backupDiffers() (bool, error) {
	n := bootRegionSectors * fs.g.sectorSize
	b := make([]byte, 2*n)
	if err := fs.readAt(b, 0); err != nil {
		return false, err
	}
	main, backup := b[:n], b[n:]
	for _, i := range []int{offVolumeFlags, offVolumeFlags + 1, offPercentInUse} {
		main[i], backup[i] = 0, 0
	}
	return !bytes.Equal(main, backup), nil
}

// claim records ch's clusters as owned by path and returns how many there
// are, or 0 after reporting a cluster owned already (dup, when the chain
// is exactly one claimed before).
func (c *checker) claim(path string, ch chain) uint32 {
	n, _ := c.claimEntry(path, ch)
	return n
}

func (c *checker) claimEntry(path string, ch chain) (n uint32, dup bool) {
	idx := int32(len(c.paths))
	c.paths = append(c.paths, path)
	c.chains = append(c.chains, ch)
	for _, rn := range ch.Runs {
		for cl := rn.First; cl < rn.First+rn.Count; cl++ {
			if o := c.owner[cl]; o >= 0 {
				if sameChain(c.chains[o], ch) {
					c.report.Duplicates = append(c.report.Duplicates, fmt.Sprintf("%s has the clusters of %s", path, c.paths[o]))
					return 0, true
				}
				c.report.CrossLinks = append(c.report.CrossLinks, fmt.Sprintf("%s and %s share cluster %d", c.paths[o], path, cl))
				return 0, false
			}
		}
	}
	for _, rn := range ch.Runs {
		for cl := rn.First; cl < rn.First+rn.Count; cl++ {
			c.owner[cl] = idx
		}
	}
	return ch.N, false
}

func sameChain(a, b chain) bool {
	if a.N != b.N || len(a.Runs) != len(b.Runs) {
		return false
	}
	for i := range a.Runs {
		if a.Runs[i] != b.Runs[i] {
			return false
		}
	}
	return true
}

func (c *checker) walk(d *dirCache, p string) {
	r, fs := c.report, c.fs
	r.Dirs++
	shown := p
	if shown == "" {
		shown = "/"
	}
	for _, b := range d.bad {
		r.BadEntries = append(r.BadEntries, shown+": "+b)
	}
	if d.clash > 0 {
		r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: %d names that differ only in case from another", shown, d.clash))
	}
	r.OrphanEntries += len(d.orphans)
	for _, s := range d.orphans {
		c.orph = append(c.orph, orphanSlot{d, s})
	}
	for _, e := range d.fixable {
		r.BadChecksums = append(r.BadChecksums, p+"/"+e.name)
		c.sums = append(c.sums, e)
	}
	cs := int64(fs.g.clusterSize)
	for _, e := range d.sortedLive() {
		ep := p + "/" + e.name
		need := (int64(e.size) + cs - 1) / cs
		ch, long, err := fs.loadChain(e.start, need, e.noFatChain())
		if err != nil {
			r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: %v", ep, err))
			continue
		}
		if long {
			r.LongChains = append(r.LongChains, fmt.Sprintf("%s: %d bytes, its FAT chain goes on past cluster %d", ep, e.size, need))
			c.long = append(c.long, longChain{start: e.start, keep: uint32(need)})
		}
		n, dup := c.claimEntry(ep, ch)
		if dup {
			c.dups = append(c.dups, dupEntry{d, e})
			continue
		}
		if e.isDir() {
			if n == 0 {
				continue
			}
			r.DirClusters += n
			sub := &dirCache{fs: fs, parent: d, self: e, ch: ch}
			if err := fs.readDirData(sub); err != nil {
				r.BadEntries = append(r.BadEntries, fmt.Sprintf("%s: %v", ep, err))
				continue
			}
			sub.parse()
			c.walk(sub, ep)
			continue
		}
		r.Files++
		r.FileClusters += n
	}
}

// repair applies the fixes Check may make.
func (c *checker) repair(lost, unmarked []uint32) error {
	fs, r := c.fs, c.report
	g := fs.g
	n := bootRegionSectors * g.sectorSize
	if fs.fromBackup || len(r.BootProblems) > 0 {
		b := make([]byte, 2*n)
		if err := fs.readAt(b, 0); err != nil {
			return err
		}
		if fs.fromBackup {
			// Restore the main region from the backup, its boot sector last.
			if err := fs.rawWrite(b[n+g.sectorSize:], int64(g.sectorSize)); err != nil {
				return err
			}
			if err := fs.rawWrite(b[n:n+g.sectorSize], 0); err != nil {
				return err
			}
			copy(fs.boot, b[n:n+g.sectorSize])
			fs.fromBackup = false
			r.Repaired = append(r.Repaired, "restored the main boot region from the backup")
		} else {
			if err := fs.rawWrite(b[:n], int64(n)); err != nil {
				return err
			}
			r.Repaired = append(r.Repaired, "rewrote the backup boot region from the main one")
		}
	}
	for _, e := range c.sums {
		if err := e.dir.update(e); err != nil {
			return err
		}
	}
	if len(c.sums) > 0 {
		r.Repaired = append(r.Repaired, fmt.Sprintf("rewrote %d entry sets with their right checksums", len(c.sums)))
	}
	for _, o := range c.orph {
		o.dir.data[o.slot*entrySize] &^= entryInUse
		sps := o.dir.slotsPerSector()
		if err := o.dir.writeRange(o.slot/sps, o.slot/sps); err != nil {
			return err
		}
	}
	if len(c.orph) > 0 {
		r.Repaired = append(r.Repaired, fmt.Sprintf("marked %d orphaned secondary entries unused", len(c.orph)))
	}
	for _, de := range c.dups {
		if err := de.dir.remove(de.ent); err != nil {
			return err
		}
	}
	if len(c.dups) > 0 {
		r.Repaired = append(r.Repaired, fmt.Sprintf("removed %d entries that duplicated another's clusters", len(c.dups)))
	}
	t := c.fat
	for _, lc := range c.long {
		cl := lc.start
		for i := uint32(1); i < lc.keep; i++ {
			cl = t.get(cl)
		}
		t.set(cl, eocCluster)
	}
	fs.fat = t
	if err := fs.flushFAT(); err != nil {
		return err
	}
	if len(c.long) > 0 {
		r.Repaired = append(r.Repaired, fmt.Sprintf("cut %d chains to their file sizes", len(c.long)))
	}
	bm := c.bm
	for _, cl := range unmarked {
		bm.setRange(cl, 1, true)
	}
	fs.bm = bm
	if err := fs.flushBitmap(); err != nil {
		return err
	}
	for _, cl := range lost {
		bm.setRange(cl, 1, false)
	}
	if err := fs.flushBitmap(); err != nil {
		return err
	}
	if len(unmarked) > 0 {
		r.Repaired = append(r.Repaired, fmt.Sprintf("marked %d owned clusters in use in the bitmap", len(unmarked)))
	}
	if len(lost) > 0 {
		r.Repaired = append(r.Repaired, fmt.Sprintf("freed %d lost clusters", len(lost)))
	}
	if !r.Errors() {
		fs.wasDirty = false
		if err := fatcore.SyncDevice(fs.w); err != nil {
			return fmt.Errorf("exfat: syncing device: %w", err)
		}
		if err := fs.writeFlags(g.flags&^flagVolumeDirty, fs.percentInUse()); err != nil {
			return err
		}
		fs.dirtyDisk = false
		if r.Dirty {
			r.Repaired = append(r.Repaired, "cleared the volume dirty flag")
		}
	}
	// Directory caches may hold entries changed above: start afresh.
	fs.dirs = make(map[uint32]*dirCache)
	return fs.loadRoot()
}
