package fat

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// dirCache is a directory held in memory: its raw slots exactly as they
// are on disk (plus new entries not yet committed), and an index of its
// live entries by name. Every change is made to data and then written out
// sector by sector in an order that keeps the directory valid on disk
// after each single write.
type dirCache struct {
	fs     *FS
	fixed  bool  // the FAT12/16 root directory region
	ch     chain // clusters (not for the fixed root)
	data   []byte
	parent *dirCache // nil for the root
	self   *entry    // this directory's entry in parent; nil for the root

	byKey  map[string]*entry // folded long and short names
	clash  int               // names that map to a key held by another entry
	shorts map[shortName]*entry
	live   map[*entry]struct{}
	// pending holds new entries whose slots have never been written. Until
	// they are, their first slot reads 0x00 on disk, which would hide every
	// entry after it; writeSlots writes them (as empty files) before
	// anything that follows them.
	pending map[*entry]struct{}
	end     int    // first slot after the last one ever used (the 0x00 end marker)
	free    int    // deleted slots before end
	dotdot  int    // slot of the ".." entry, -1 if none
	label   string // volume label entry (root only)

	dupShorts   int      // entries read whose short name another entry has
	damaged     []*entry // entries that cannot be valid (see parse)
	garbage     bool     // damaged entries outnumber good ones: never written to
	bad         []string // why the directory is garbage, one line per entry
	orphanSlots []int    // long-name slots that belong to no entry (harmless)
	straySlots  []int    // "." and ".." entries and volume labels out of place
	strayLabels int      // how many of those are labels (they count as damaged)
	hiddenEnds  []int    // end marks with slots in use after them

	// noIndex makes parse list the entries in order (in list) without
	// indexing them: what the cross-link walk needs, at a third the cost.
	noIndex bool
	list    []*entry
}

// Parent and Name say where the directory is (fatcore.Dir).
func (d *dirCache) Parent() *dirCache { return d.parent }
func (d *dirCache) Name() string      { return d.self.name }

func (d *dirCache) slots() int { return len(d.data) / 32 }

func (d *dirCache) slotsPerSector() int { return d.fs.g.bytesPerSector / 32 }

// firstCluster is the directory's first cluster (0 for the fixed root).
func (d *dirCache) firstCluster() uint32 { return d.ch.First() }

// parse builds the index from data.
//
// An entry that cannot be valid (a forbidden byte in its short name, a
// first cluster outside the volume, a size without a cluster) is damaged:
// it is still indexed and listed (under a name with the forbidden
// characters shown as '?'), so that the rest of the directory stays usable
// and the entry itself can be removed or repaired. Only a directory where
// damaged entries outnumber the good ones (a cluster of garbage, by
// fsck.fat's measure) is treated as corrupt: its damaged entries are left
// out and nothing is written to it.
//
// Long names whose slots do not fit together are dropped in favour of the
// short name; their slots are recorded in orphanSlots. "." and ".."
// entries out of place are recorded in straySlots.
func (d *dirCache) parse() {
	d.byKey = make(map[string]*entry)
	d.clash = 0
	d.shorts = make(map[shortName]*entry)
	d.live = make(map[*entry]struct{})
	d.pending = make(map[*entry]struct{})
	d.dotdot = -1
	d.bad = nil
	d.damaged = nil
	d.dupShorts = 0
	d.orphanSlots = nil
	d.straySlots = nil
	d.strayLabels = 0
	d.hiddenEnds = nil
	d.free = 0
	fat32 := d.fs.g.typ == FAT32
	isRoot := d.parent == nil

	var lfn []uint16
	lfnSeq, lfnSum, lfnFirst := 0, byte(0), 0
	// orphanRun records the long-name slots from lfnFirst up to i as
	// belonging to no entry.
	orphanRun := func(i int) {
		if lfnSeq != 0 {
			for k := lfnFirst; k < i; k++ {
				d.orphanSlots = append(d.orphanSlots, k)
			}
		}
		lfnSeq = 0
	}
	var good []*entry
	n := d.slots()
	d.end = n
	for i := 0; i < n; i++ {
		p := d.data[i*32 : i*32+32]
		switch p[0] {
		case 0:
			orphanRun(i)
			d.end = i
			// Slots in use after the end mark are invisible here and to
			// Windows, but fsck.fat and Linux read on past it: Check
			// reports them, and its repair makes the marks before them
			// deleted slots, so that everyone sees the same entries.
			for j := n - 1; j > i; j-- {
				if d.data[j*32] != 0 {
					for k := i; k < j; k++ {
						if d.data[k*32] == 0 {
							d.hiddenEnds = append(d.hiddenEnds, k)
						}
					}
					break
				}
			}
			d.finishParse(good)
			return
		case slotDeleted:
			d.free++
			orphanRun(i)
			continue
		}
		if p[11]&0x3F == attrLFN {
			seq := int(p[0] & 0x1F)
			switch {
			case p[0]&0x40 != 0 && seq >= 1 && seq <= 20:
				orphanRun(i)
				lfn = lfn[:0]
				for k := 0; k < seq*lfnUnits; k++ {
					lfn = append(lfn, 0xFFFF)
				}
				lfnSeq, lfnSum, lfnFirst = seq, p[13], i
			case lfnSeq > 1 && seq == lfnSeq-1 && p[13] == lfnSum:
				lfnSeq = seq
			default:
				orphanRun(i) // the run so far, then this piece on its own
				d.orphanSlots = append(d.orphanSlots, i)
				continue
			}
			for k := 0; k < lfnUnits; k++ {
				o := lfnOffsets[k]
				lfn[(seq-1)*lfnUnits+k] = uint16(p[o]) | uint16(p[o+1])<<8
			}
			continue
		}
		e := &entry{dir: d, slot: i, nslots: 1}
		e.decodeShort(p)
		if !fat32 {
			e.start &= 0xFFFF
		}
		if e.attr&attrVolumeLabel != 0 && e.attr&AttrDir == 0 {
			orphanRun(i)
			if isRoot && d.label == "" && e.start == 0 && e.size == 0 {
				d.label = strings.TrimRight(string(e.short[:]), " ")
				continue
			}
			// A label outside the root, a second one, or one with a
			// cluster: fsck.fat checks it as a file; it is garbage.
			d.straySlots = append(d.straySlots, i)
			d.strayLabels++
			continue
		}
		if e.short[0] == '.' && (string(e.short[:]) == ".          " || string(e.short[:]) == "..         ") {
			orphanRun(i)
			switch {
			case !isRoot && i == 0 && e.short[1] == ' ':
			case !isRoot && i == 1 && e.short[1] == '.':
				d.dotdot = i
			default:
				d.straySlots = append(d.straySlots, i)
			}
			continue
		}
		if lfnSeq == 1 && lfnSum == lfnChecksum(e.short) {
			units := lfn
			for k, u := range units {
				if u == 0 {
					units = units[:k]
					break
				}
			}
			e.name = string(utf16.Decode(units))
			e.nslots = i - lfnFirst + 1
			lfnSeq = 0
		} else {
			orphanRun(i)
		}
		if e.name == "" {
			e.name = decodeShortName(e.short, e.nt)
		}
		if why, kind := d.checkEntry(e); kind != damageNone {
			e.damage, e.damageKind = why, kind
			e.name = shownName(e.name)
			d.damaged = append(d.damaged, e)
			continue
		}
		good = append(good, e)
	}
	orphanRun(n)
	d.finishParse(good)
}

// finishParse indexes the entries parse found, deciding whether the
// damaged ones are a few bad entries (indexed with the rest) or a sign that
// the whole directory is garbage.
func (d *dirCache) finishParse(good []*entry) {
	nd := len(d.damaged) + d.strayLabels
	d.garbage = nd+len(good) > 4 && nd > len(good)/2
	if d.noIndex {
		d.list = append(good, d.damaged...)
		return
	}
	add := func(e *entry) {
		e.key = foldName(e.name)
		_, sameName := d.byKey[e.key]
		_, sameShort := d.shorts[e.short]
		e.dup = sameName || sameShort
		if sameShort {
			d.dupShorts++
		}
		d.index(e)
	}
	for _, e := range good {
		add(e)
	}
	if d.garbage {
		for _, e := range d.damaged {
			d.bad = append(d.bad, fmt.Sprintf("slot %d (%q): %s", e.slot, e.name, e.damage))
		}
		return
	}
	for _, e := range d.damaged {
		add(e)
	}
}

// Kinds of damage an entry can have.
const (
	damageNone = iota
	// damageName: a forbidden character in the short (or long) name. The
	// entry is otherwise whole: it can be read, moved and removed.
	damageName
	// damageData: the entry's cluster or size cannot be right. It can be
	// listed and removed (which frees nothing), not read.
	damageData
)

// checkEntry returns why an 8.3 slot cannot be a valid entry and how bad
// that is, or "" and damageNone.
func (d *dirCache) checkEntry(e *entry) (string, int) {
	t := d.fs.fat
	if e.start != 0 && !t.valid(e.start) {
		return fmt.Sprintf("first cluster %d outside 2..%d", e.start, t.count-1), damageData
	}
	if e.isDir() && e.start == 0 {
		return "directory without a cluster", damageData
	}
	if !e.isDir() && e.start == 0 && e.size != 0 {
		return fmt.Sprintf("file of %d bytes without a cluster", e.size), damageData
	}
	if e.nt&ntNo83Name != 0 && e.nslots == 1 {
		// Linux's marker for an entry with a long name only, without one.
		return "no short name and no long name", damageName
	}
	for k, c := range e.short {
		if c < 0x20 && !(k == 0 && c == 0x05) || c == 0x7F || strings.IndexByte(`*?<>|"\/:.`, c) >= 0 {
			// (A '.' too: fsck.fat 4.2 renames such names.)
			return fmt.Sprintf("invalid character 0x%02x in short name", c), damageName
		}
	}
	if e.short[0] == ' ' {
		return "short name starts with a space", damageName
	}
	if err := checkName(e.name); err != nil {
		return "invalid long name", damageName
	}
	return "", damageNone
}

// shownName is the name a damaged entry is listed and found under: every
// character a FAT name cannot hold becomes '?', which no valid name
// contains, so the entry can be named (to remove it) without clashing with
// a valid one.
func shownName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < 0x20 || r == 0x7F || r == utf8.RuneError || strings.ContainsRune(`"*/:<>?\|`, r) {
			r = '?'
		}
		b.WriteRune(r)
	}
	s := strings.TrimRight(b.String(), " ")
	if s == "" || s == "." || s == ".." {
		s = "?" + s
	}
	return s
}

// index adds e to the lookup tables. Two entries whose names fold to the
// same key cannot be created here but can be found on disks written by
// others; the first one keeps the key and the clash is counted.
func (d *dirCache) index(e *entry) {
	e.dir = d
	d.live[e] = struct{}{}
	d.addKey(e.key, e)
	d.addKey(foldName(decodeShortName(e.short, 0)), e)
	if _, taken := d.shorts[e.short]; !taken {
		d.shorts[e.short] = e
	}
}

func (d *dirCache) addKey(k string, e *entry) {
	if o, dup := d.byKey[k]; !dup {
		d.byKey[k] = e
	} else if o != e {
		d.clash++
	}
}

// unindex removes e from the lookup tables.
func (d *dirCache) unindex(e *entry) {
	delete(d.live, e)
	for _, k := range []string{e.key, foldName(decodeShortName(e.short, 0))} {
		if d.byKey[k] == e {
			delete(d.byKey, k)
		}
	}
	if d.shorts[e.short] == e {
		delete(d.shorts, e.short)
		if d.dupShorts > 0 {
			// Another entry read from disk may carry the same short name:
			// it must stay taken.
			for o := range d.live {
				if o.short == e.short {
					d.shorts[o.short] = o
					break
				}
			}
		}
	}
	if d.clash > 0 {
		// A name e shadowed may be free now: rebuild the keys.
		d.byKey = make(map[string]*entry, len(d.live))
		d.clash = 0
		for o := range d.live {
			d.addKey(o.key, o)
			d.addKey(foldName(decodeShortName(o.short, 0)), o)
		}
	}
}

// lookup finds a live entry by long or short name, ignoring case.
func (d *dirCache) lookup(name string) *entry {
	return d.byKey[foldName(name)]
}

// corrupt reports whether the directory is garbage, in which case it is
// not modified (a cluster of garbage is no place to write). A few damaged
// entries do not make a directory corrupt.
func (d *dirCache) corrupt() error {
	if !d.garbage {
		return nil
	}
	return corruptf("directory %s: %s", d.path(), fatcore.BadSummary(d.bad))
}

// path is the directory's path for messages.
func (d *dirCache) path() string { return fatcore.DirPath(d) }

// slotOffset returns the device offset of slot i.
func (d *dirCache) slotOffset(i int) int64 {
	g := d.fs.g
	if d.fixed {
		return g.rootDirOffset + int64(i)*32
	}
	byteOff := int64(i) * 32
	c, _ := d.ch.At(uint32(byteOff / int64(g.clusterSize)))
	return g.clusterOffset(c) + byteOff%int64(g.clusterSize)
}

// writeSlots writes the sectors holding slots from..to-1, first to last,
// preceded by the sectors of any never-written new entry placed before to.
func (d *dirCache) writeSlots(from, to int) error {
	for p := range d.pending {
		if p.firstSlot() < to {
			if f := p.firstSlot(); f < from {
				from = f
			}
			if p.slot+1 > to {
				to = p.slot + 1
			}
		}
	}
	sps := d.slotsPerSector()
	for s := from / sps; s <= (to-1)/sps; s++ {
		lo, hi := s*sps, (s+1)*sps
		if hi > d.slots() {
			hi = d.slots()
		}
		if err := d.fs.writeAt(d.data[lo*32:hi*32], d.slotOffset(lo)); err != nil {
			return err
		}
	}
	for p := range d.pending {
		if p.firstSlot() >= (from/sps)*sps && p.slot < ((to-1)/sps+1)*sps {
			delete(d.pending, p)
		}
	}
	return nil
}

// writeEntry writes the slots of e; when they span sectors, the long-name
// sectors go first and the 8.3 slot (which makes the entry exist) last.
func (d *dirCache) writeEntry(e *entry) error {
	return d.writeSlots(e.firstSlot(), e.slot+1)
}

// place finds room for k consecutive slots, growing the directory if
// needed, and returns the first slot. Slots it skips at the end are marked
// deleted on disk, and the slot after the run is made an end marker, both
// before the run itself is ever written.
func (d *dirCache) place(k int) (int, error) {
	sps := d.slotsPerSector()
	fits := func(s int) bool { return k > sps || s/sps == (s+k-1)/sps }
	// Reuse deleted slots first: the last k slots of a run of deleted
	// ones, sliding until they sit in one sector.
	if d.free >= k {
		runLen := 0
		for i := 0; i < d.end; i++ {
			if d.data[i*32] != slotDeleted {
				runLen = 0
				continue
			}
			runLen++
			if runLen >= k && fits(i-k+1) {
				return i - k + 1, nil
			}
		}
	}
	for {
		s := d.end
		if !fits(s) {
			s = (s/sps + 1) * sps
		}
		if s+k <= d.slots() {
			if err := d.claimTail(s, k); err != nil {
				return 0, err
			}
			return s, nil
		}
		if err := d.grow(); err != nil {
			return 0, err
		}
	}
}

// claimTail prepares slots s..s+k-1 at or after the end marker: the skipped
// slots become deleted ones, and the slot after the run an end marker.
func (d *dirCache) claimTail(s, k int) error {
	from := d.end
	for i := d.end; i < s; i++ {
		p := d.data[i*32 : i*32+32]
		for j := range p {
			p[j] = 0
		}
		p[0] = slotDeleted
		d.free++
	}
	if s > from {
		if err := d.writeSlots(from, s); err != nil {
			return err
		}
	}
	if e := s + k; e < d.slots() && d.data[e*32] != 0 {
		d.data[e*32] = 0
		if err := d.writeSlots(e, e+1); err != nil {
			return err
		}
	}
	d.end = s + k
	return nil
}

// maxDirSlots is the largest directory FAT allows (2 MiB of slots).
const maxDirSlots = 65536

// grow appends zeroed clusters: they are zeroed on disk and their end
// mark written first, then (after a barrier) linked into the chain, so the
// directory never shows garbage and never runs into a free cluster. In
// one FAT flush the link could go first: sectors are written in order,
// and the new cluster's entry may sit in a later one (the kill campaign
// found it; TestKilledWhileADirectoryGrows).
//
// A directory doubles (by 64 KiB at least, a sixteenth of the free space
// at most), since each growth costs a barrier: a put of 1,000 files into
// one directory (which holds their temporary long names too, until they
// are renamed) grew it a cluster at a time, a flush each, 45 of the
// put's 52 (issue 31, item 4). A volume's directories are small beside
// its files, and what is grown is free slots, used by the next entries;
// a directory that fits its first cluster never grows.
func (d *dirCache) grow() error {
	fs := d.fs
	if d.fixed {
		return fmt.Errorf("%w: root directory is full (%d entries)", ErrNoSpace, d.slots())
	}
	cs := fs.g.clusterSize
	if d.slots()+cs/32 > maxDirSlots {
		return fmt.Errorf("%w: directory %s has reached %d entries", ErrNoSpace, d.path(), maxDirSlots)
	}
	n := max(uint32(d.slots()*32/cs), uint32(64<<10/cs))
	n = max(min(n, uint32((maxDirSlots-d.slots())*32/cs), fs.fat.available()/16), 1)
	return d.growBy(n)
}

// growBy appends n zeroed clusters, for one barrier (see grow).
func (d *dirCache) growBy(n uint32) error {
	fs := d.fs
	cs := fs.g.clusterSize
	runs, err := fs.allocate(n, d.ch.Last())
	if err != nil {
		return err
	}
	for _, r := range runs {
		for c := r.First; c < r.First+r.Count; c++ {
			if err := fs.writeAt(fs.zeroCluster(), fs.g.clusterOffset(c)); err != nil {
				return err
			}
		}
	}
	if err := fs.flushFAT(); err != nil {
		return err
	}
	if err := fs.barrier(); err != nil {
		return err
	}
	fs.fat.set(d.ch.Last(), runs[0].First)
	if err := fs.flushFAT(); err != nil {
		return err
	}
	for _, r := range runs {
		d.ch.Add(r)
	}
	d.data = append(d.data, make([]byte, int(n)*cs)...)
	return nil
}

// add creates an entry for name with the given attributes and metadata
// template. With pending set, nothing is written: the entry exists in
// memory and reaches the disk when it is committed.
func (d *dirCache) add(name string, tmpl *entry, pending bool, exclude *entry) (*entry, error) {
	e, err := d.newEntry(name, tmpl, exclude)
	if err != nil {
		return nil, err
	}
	if pending {
		e.pending = true
		d.pending[e] = struct{}{}
		return e, nil
	}
	if err := d.writeEntry(e); err != nil {
		return nil, err
	}
	return e, nil
}

// newEntry places an entry for name (place may write, to make room) and
// encodes it into data and the index, without writing its slots.
func (d *dirCache) newEntry(name string, tmpl *entry, exclude *entry) (*entry, error) {
	short, nt, k, err := d.shortFor(name, exclude)
	if err != nil {
		return nil, err
	}
	s, err := d.place(k)
	if err != nil {
		return nil, err
	}
	return d.encodeNew(name, tmpl, short, nt, s, k), nil
}

// respell gives e a new name that differs only in case, rewriting its
// slots in place when the new name needs as many slots (one sector write
// when they share a sector). It reports false when it cannot.
func (d *dirCache) respell(e *entry, name string) (bool, error) {
	short, nt, needLFN, err := makeShortName(name, func(s shortName) bool {
		o, ok := d.shorts[s]
		return ok && o != e
	})
	if err != nil {
		return false, err
	}
	k := 1
	if needLFN {
		k += lfnSlots(name)
	}
	if k != e.nslots {
		return false, nil
	}
	d.unindex(e)
	e.name, e.key, e.short, e.nt = name, foldName(name), short, nt
	first := e.firstSlot()
	if needLFN {
		encodeLFN(d.data[first*32:e.slot*32], name, lfnChecksum(short))
	}
	d.index(e)
	e.encodeShort(d.data[e.slot*32 : e.slot*32+32])
	return true, d.writeEntry(e)
}

// update rewrites e's 8.3 slot from its fields (one sector write).
func (d *dirCache) update(e *entry) error {
	e.encodeShort(d.data[e.slot*32 : e.slot*32+32])
	if e.pending {
		e.pending = false
		return d.writeEntry(e)
	}
	if _, unwritten := d.pending[e]; unwritten {
		return d.writeEntry(e)
	}
	return d.writeSlots(e.slot, e.slot+1)
}

// remove deletes e's slots: the 8.3 slot's sector is written first, so
// the entry vanishes in one write even when its long name spans sectors.
func (d *dirCache) remove(e *entry) error {
	d.erase(e)
	sps := d.slotsPerSector()
	first := e.firstSlot()
	if err := d.writeSlots(e.slot, e.slot+1); err != nil {
		return err
	}
	if first/sps != e.slot/sps {
		return d.writeSlots(first, (e.slot/sps)*sps)
	}
	return nil
}

// erase marks e's slots deleted in memory and drops it from the index.
func (d *dirCache) erase(e *entry) {
	for i := e.firstSlot(); i <= e.slot; i++ {
		d.data[i*32] = slotDeleted
	}
	d.free += e.nslots
	d.unindex(e)
	e.pending = false
	delete(d.pending, e)
}

// sector returns the index of the sector holding slot i.
func (d *dirCache) sector(i int) int { return i / d.slotsPerSector() }

// oneSector reports whether every slot of the entries lies in one sector.
func (d *dirCache) oneSector(es ...*entry) bool {
	s := d.sector(es[0].slot)
	for _, e := range es {
		if d.sector(e.firstSlot()) != s || d.sector(e.slot) != s {
			return false
		}
	}
	return true
}

// isEmpty reports whether the directory has no live entries.
func (d *dirCache) isEmpty() bool { return len(d.live) == 0 }
