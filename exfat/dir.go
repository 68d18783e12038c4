package exfat

import (
	"encoding/binary"
	"fmt"
	"sort"
	"unicode/utf16"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// maxDirBytes is the largest a directory may grow (section 6.2.1: 256 MiB).
const maxDirBytes = 256 << 20

// dirCache is a directory held in memory: its raw entries exactly as they
// are on disk (plus entry sets not yet written), and an index of its live
// entries by up-cased name. Every change is made to data and then written
// out sector by sector in an order that keeps the directory valid on disk
// after each single write (see writeSlots).
type dirCache struct {
	fs     *FS
	ch     chain
	data   []byte
	parent *dirCache // nil for the root
	self   *entry    // this directory's entry in parent; nil for the root

	byKey map[string]*entry
	clash int // entries whose name is held by another entry (found on others' disks)
	live  map[*entry]struct{}
	// pending holds new entry sets never written. Their slots read as
	// unused (or as the end of the directory) on disk until then.
	pending map[*entry]struct{}
	// scanFrom[k] is the first sector start where a run of k unused slots
	// may begin: place starts its search there.
	scanFrom [20]int
	end      int // first slot of the end marker (slots() when there is none)
	diskEnd  int // the same on disk
	free     int // unused slots before end

	bad      []string // problems that make the directory unsafe to change
	fixable  []*entry // sets with a wrong checksum or name hash (live all the same)
	orphans  []int    // slots of in-use secondary entries with no primary
	sysSlots []int    // root: the bitmap, up-case and label entries
	label    string
	labelAt  int // slot of the volume label entry, -1 if none
}

// Parent and Name say where the directory is (fatcore.Dir).
func (d *dirCache) Parent() *dirCache { return d.parent }
func (d *dirCache) Name() string      { return d.self.name }

func (d *dirCache) slots() int          { return len(d.data) / entrySize }
func (d *dirCache) slotsPerSector() int { return d.fs.g.sectorSize / entrySize }
func (d *dirCache) firstCluster() uint32 {
	return d.ch.First()
}

// parse builds the index from data.
func (d *dirCache) parse() {
	d.byKey = make(map[string]*entry)
	d.live = make(map[*entry]struct{})
	d.pending = make(map[*entry]struct{})
	d.clash, d.free, d.bad, d.fixable, d.orphans, d.sysSlots = 0, 0, nil, nil, nil, nil
	d.scanFrom = [20]int{}
	d.labelAt = -1
	isRoot := d.parent == nil
	n := d.slots()
	d.end, d.diskEnd = n, n
	for i := 0; i < n; {
		p := d.data[i*entrySize : (i+1)*entrySize]
		t := p[0]
		switch {
		case t == typeEnd:
			d.end, d.diskEnd = i, i
			return
		case t&entryInUse == 0:
			d.free++
			i++
			continue
		case t == typeFile:
			e, why, fixable := decodeSet(d.data[i*entrySize:], d.fs.up)
			if e == nil {
				d.bad = append(d.bad, fmt.Sprintf("entry %d: %s", i, why))
				i++
				continue
			}
			e.slot = i
			if w := d.checkEntry(e); w != "" {
				d.bad = append(d.bad, fmt.Sprintf("entry %d (%q): %s", i, e.name, w))
				i += e.nslots
				continue
			}
			if why != "" && fixable {
				d.fixable = append(d.fixable, e)
			}
			d.index(e)
			i += e.nslots
			continue
		case t&entrySecondary != 0:
			d.orphans = append(d.orphans, i)
		case isRoot && (t == typeBitmap || t == typeUpcase):
			d.sysSlots = append(d.sysSlots, i)
		case isRoot && t == typeVolumeLabel:
			d.sysSlots = append(d.sysSlots, i)
			if d.labelAt < 0 {
				d.labelAt = i
				k := min(int(p[1]), 11)
				u := make([]uint16, k)
				for j := range u {
					u[j] = binary.LittleEndian.Uint16(p[2+2*j:])
				}
				d.label = string(utf16.Decode(u))
			}
		case t&entryBenign != 0:
			// A benign primary (volume GUID, TexFAT padding...): kept, with
			// its secondaries.
			i += 1 + int(p[1])
			continue
		default:
			d.bad = append(d.bad, fmt.Sprintf("entry %d: unknown critical entry type %#02x", i, t))
		}
		i++
	}
}

// checkEntry returns why a decoded set cannot be used, or "".
func (d *dirCache) checkEntry(e *entry) string {
	g := d.fs.g
	if e.start != 0 && !g.validCluster(e.start) {
		return fmt.Sprintf("first cluster %d outside 2..%d", e.start, g.clusterCount+1)
	}
	if e.isDir() {
		if e.start == 0 || e.size == 0 {
			return "directory without clusters"
		}
		if e.size%uint64(g.clusterSize) != 0 || e.size > maxDirBytes {
			return fmt.Sprintf("directory size %d is not a whole number of clusters up to 256 MiB", e.size)
		}
	}
	maxBytes := uint64(g.clusterCount) << g.clusterShift
	if e.size > maxBytes {
		return fmt.Sprintf("size %d is larger than the cluster heap", e.size)
	}
	return ""
}

func (d *dirCache) index(e *entry) {
	e.dir = d
	e.key = d.fs.up.key(e.units)
	d.live[e] = struct{}{}
	if o, dup := d.byKey[e.key]; !dup {
		d.byKey[e.key] = e
	} else if o != e {
		d.clash++
	}
}

func (d *dirCache) unindex(e *entry) {
	delete(d.live, e)
	if d.byKey[e.key] == e {
		delete(d.byKey, e.key)
	}
	if d.clash > 0 {
		d.byKey = make(map[string]*entry, len(d.live))
		d.clash = 0
		for o := range d.live {
			if _, dup := d.byKey[o.key]; dup {
				d.clash++
			} else {
				d.byKey[o.key] = o
			}
		}
	}
}

func (d *dirCache) lookup(name string) *entry {
	u := utf16.Encode([]rune(name))
	return d.byKey[d.fs.up.key(u)]
}

// corrupt reports whether the directory holds entries that cannot be
// understood, in which case it is not changed.
func (d *dirCache) corrupt() error {
	if len(d.bad) == 0 {
		return nil
	}
	return corruptf("directory %s: %s", d.path(), fatcore.BadSummary(d.bad))
}

// path is the directory's path for messages.
func (d *dirCache) path() string { return fatcore.DirPath(d) }

// slotOffset is the device offset of slot i.
func (d *dirCache) slotOffset(i int) int64 {
	g := d.fs.g
	b := int64(i) * entrySize
	c, _ := d.ch.At(uint32(b >> g.clusterShift))
	return g.clusterOffset(c) + b&int64(g.clusterSize-1)
}

// writeSlots writes the sectors holding slots from..to-1, from the last
// sector to the first. Written past the end of the directory as it is on
// disk (diskEnd, the first slot that reads as the end there), the range
// starts at diskEnd (taking filler entries and the sets placed after it)
// and takes the new end marker: those slots read as the end of the
// directory until the sector holding diskEnd is written, last, so a set
// that spans sectors appears in one write. A never-written set that shares
// a sector with the range goes with it, whole (as it is: an empty file
// until its commit).
func (d *dirCache) writeSlots(from, to int) error {
	sps := d.slotsPerSector()
	if to > d.diskEnd {
		from = min(from, d.diskEnd)
		if to < d.slots() && d.data[to*entrySize] == typeEnd {
			to++
		}
	}
	for grown := true; grown; {
		grown = false
		lo, hi := from/sps*sps, ((to-1)/sps+1)*sps
		for p := range d.pending {
			if p.fill < hi && p.slot+p.nslots > lo && (p.fill < from || p.slot+p.nslots > to) {
				from, to = min(from, p.fill), max(to, p.slot+p.nslots)
				grown = true
			}
		}
	}
	if err := d.writeSectors(from/sps, (to-1)/sps, true); err != nil {
		return err
	}
	for p := range d.pending {
		if p.fill >= from && p.slot+p.nslots <= to {
			delete(d.pending, p)
			p.pending = false
		}
	}
	return nil
}

// writeSectors writes sectors a..b of the directory (last first when
// reverse is set) and moves diskEnd past what they cover.
func (d *dirCache) writeSectors(a, b int, reverse bool) error {
	sps := d.slotsPerSector()
	for i := 0; i <= b-a; i++ {
		s := a + i
		if reverse {
			s = b - i
		}
		lo, hi := s*sps, min((s+1)*sps, d.slots())
		if err := d.fs.writeAt(d.data[lo*entrySize:hi*entrySize], d.slotOffset(lo)); err != nil {
			return err
		}
	}
	if lo, hi := a*sps, min((b+1)*sps, d.slots()); d.diskEnd >= lo && d.diskEnd < hi {
		e := d.diskEnd
		for e < hi && d.data[e*entrySize] != typeEnd {
			e++
		}
		d.diskEnd = e
	}
	return nil
}

// place finds room for k consecutive slots and returns the first. Unused
// slots are reused when k of them sit in one sector; otherwise the set
// goes at the end of the directory (which grows when full), starting a new
// sector when it would not fit in the current one, so that a set of up to
// a sector's worth of entries is always one sector write — to create, to
// update and to remove. Longer sets keep their File and Stream Extension
// entries (all an update changes) in one sector.
func (d *dirCache) place(k int) (slot, writeFrom int, reused bool, err error) {
	sps := d.slotsPerSector()
	if k <= sps && d.free >= k {
		runLen := 0
		for i := d.scanFrom[k]; i < d.end; i++ {
			if i%sps == 0 {
				runLen = 0
			}
			if d.data[i*entrySize]&entryInUse != 0 {
				runLen = 0
				continue
			}
			runLen++
			if runLen == k {
				d.scanFrom[k] = (i - k + 1) / sps * sps
				return i - k + 1, i - k + 1, true, nil
			}
		}
		d.scanFrom[k] = d.end / sps * sps
	}
	for {
		s := d.end
		if k <= sps && s/sps != (s+k-1)/sps || k > sps && s%sps == sps-1 {
			s = (s/sps + 1) * sps
		}
		if s+k <= d.slots() {
			from := d.end
			d.claimTail(s, k)
			return s, from, false, nil
		}
		if err := d.grow(); err != nil {
			return 0, 0, false, err
		}
	}
}

// pendingIn reports whether a never-written set has slots in the sectors
// holding slots lo..hi-1.
func (d *dirCache) pendingIn(lo, hi int) bool {
	sps := d.slotsPerSector()
	a, b := lo/sps*sps, ((hi-1)/sps+1)*sps
	for p := range d.pending {
		if p.fill < b && p.slot+p.nslots > a {
			return true
		}
	}
	return false
}

// claimTail prepares slots s..s+k-1 at or after the end marker: skipped
// slots become unused entries (a zero type byte there would end the
// directory before the new set), and the slot after the run an end
// marker. Nothing is written: the set's own write carries these bytes.
func (d *dirCache) claimTail(s, k int) {
	d.freed(d.end)
	for i := d.end; i < s; i++ {
		p := d.data[i*entrySize : (i+1)*entrySize]
		clear(p)
		p[0] = typeFile &^ entryInUse
		d.free++
	}
	if e := s + k; e < d.slots() && d.data[e*entrySize] != typeEnd {
		clear(d.data[e*entrySize : (e+1)*entrySize])
	}
	d.end = s + k
}

// grow adds a cluster to the directory: zeroed on disk first, then linked
// (FAT and bitmap), then, for a subdirectory, recorded in its entry.
func (d *dirCache) grow() error {
	fs := d.fs
	cs := fs.g.clusterSize
	if len(d.data)+cs > maxDirBytes {
		return fmt.Errorf("%w: directory %s has reached 256 MiB", ErrNoSpace, d.path())
	}
	if fs.bm.free == 0 {
		return fmt.Errorf("%w: no cluster left to grow directory %s", ErrNoSpace, d.path())
	}
	last := d.ch.Last()
	runs := fs.bm.allocate(1, last+1)
	c := runs[0].First
	if err := fs.writeAt(fs.zeroCluster(), fs.g.clusterOffset(c)); err != nil {
		return err
	}
	if err := fs.flushBitmap(); err != nil {
		return err
	}
	contiguous := c == last+1 && d.self != nil && d.self.noFatChain()
	if !contiguous {
		if d.self != nil && d.self.noFatChain() {
			// Record the run so far in the FAT before the entry stops
			// saying it is contiguous.
			fs.writeChainFAT(d.ch)
		}
		fs.fat.set(c, eocCluster)
		if err := fs.flushFAT(); err != nil {
			return err
		}
		fs.fat.set(last, c)
		if err := fs.flushFAT(); err != nil {
			return err
		}
	}
	d.ch.Add(run{First: c, Count: 1})
	d.data = append(d.data, make([]byte, cs)...)
	if e := d.self; e != nil {
		e.size += uint64(cs)
		e.valid = e.size
		if !contiguous {
			e.flags &^= flagNoFatChain
		}
		if n := e.node; n != nil {
			n.ch = d.ch.Clone()
		}
		return e.dir.update(e)
	}
	return nil
}

// add creates an entry set for units with the metadata of tmpl. With
// pending set, nothing is written: the set reaches the disk when the file
// is committed.
func (d *dirCache) add(units []uint16, tmpl *entry, pending bool) (*entry, error) {
	e := &entry{}
	*e = *tmpl
	e.units = units
	e.name = string(utf16.Decode(units))
	e.node = nil
	k := e.setSlots()
	s, from, reused, err := d.place(k)
	if err != nil {
		return nil, err
	}
	if reused {
		d.free -= k
	}
	e.slot, e.nslots = s, k
	e.encode(d.data[s*entrySize:(s+k)*entrySize], d.fs.up)
	d.index(e)
	if pending {
		e.pending, e.fill = true, from
		d.pending[e] = struct{}{}
		// The set is in data already, marked in use, so parsing or placing
		// will not hand its slots out again; on disk it is not there yet.
		return e, nil
	}
	if err := d.writeSlots(from, s+k); err != nil {
		return nil, err
	}
	return e, nil
}

// update re-encodes e's set and writes the sector(s) holding its File and
// Stream Extension entries (all of it if it was never written).
func (d *dirCache) update(e *entry) error {
	e.encode(d.data[e.slot*entrySize:(e.slot+e.nslots)*entrySize], d.fs.up)
	if e.pending {
		return d.writeSlots(e.slot, e.slot+e.nslots)
	}
	return d.writeSlots(e.slot, e.slot+2)
}

// remove marks e's entries unused: the sector with its File entry is
// written first, so the set disappears in one write when it sits in one
// sector (as every set this package writes of up to a sector's worth of
// entries does).
func (d *dirCache) remove(e *entry) error {
	for i := e.slot; i < e.slot+e.nslots; i++ {
		d.data[i*entrySize] &^= entryInUse
	}
	d.free += e.nslots
	d.freed(e.slot)
	d.unindex(e)
	if e.pending {
		delete(d.pending, e)
		e.pending = false
		return nil // never on disk
	}
	sps := d.slotsPerSector()
	if d.pendingIn(e.slot, e.slot+e.nslots) {
		// Those sectors are about to be written: put the new sets there
		// on disk first (as they are, empty files), whole.
		for i := e.slot; i < e.slot+e.nslots; i++ {
			d.data[i*entrySize] |= entryInUse
		}
		if err := d.writeSlots(e.slot, e.slot+e.nslots); err != nil {
			return err
		}
		for i := e.slot; i < e.slot+e.nslots; i++ {
			d.data[i*entrySize] &^= entryInUse
		}
	}
	head := e.slot / sps
	if err := d.writeRange(head, head); err != nil {
		return err
	}
	if tail := (e.slot + e.nslots - 1) / sps; tail > head {
		return d.writeRange(head+1, tail)
	}
	return nil
}

// writeRange writes sectors a..b of the directory, first to last (used
// where they hold only sets already on disk).
func (d *dirCache) writeRange(a, b int) error { return d.writeSectors(a, b, false) }

// freed notes that slots from i on may be unused now.
func (d *dirCache) freed(i int) {
	i = i / d.slotsPerSector() * d.slotsPerSector()
	for k := range d.scanFrom {
		d.scanFrom[k] = min(d.scanFrom[k], i)
	}
}

func (d *dirCache) isEmpty() bool { return len(d.live) == 0 }

// sortedLive returns the live entries in slot order.
func (d *dirCache) sortedLive() []*entry {
	out := make([]*entry, 0, len(d.live))
	for e := range d.live {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].slot < out[j].slot })
	return out
}

// rewrite replaces old's entry set by a new one with tmpl's metadata and
// name, in old's slots (plus unused slots right after them), when that
// range lies in one sector: one write then replaces one set by the other.
// It returns nil when the new set does not fit there.
func (d *dirCache) rewrite(old *entry, tmpl *entry) (*entry, error) {
	e := &entry{}
	*e = *tmpl
	e.node, e.pending = nil, false
	k := e.setSlots()
	sps := d.slotsPerSector()
	span := max(k, old.nslots)
	if old.pending || old.slot/sps != (old.slot+span-1)/sps || old.slot+span > d.slots() {
		return nil, nil
	}
	for i := old.slot + old.nslots; i < old.slot+k; i++ {
		if i >= d.diskEnd || d.data[i*entrySize]&entryInUse != 0 {
			return nil, nil
		}
	}
	if d.pendingIn(old.slot, old.slot+span) {
		return nil, nil
	}
	d.unindex(old)
	d.free += old.nslots - k
	d.freed(old.slot)
	e.slot, e.nslots = old.slot, k
	e.encode(d.data[e.slot*entrySize:(e.slot+k)*entrySize], d.fs.up)
	for i := e.slot + k; i < old.slot+old.nslots; i++ {
		d.data[i*entrySize] &^= entryInUse
	}
	e.name = string(utf16.Decode(e.units))
	d.index(e)
	return e, d.writeRange(e.slot/sps, e.slot/sps)
}
