package fat

import (
	"encoding/binary"
	"fmt"
)

// fatTable is the in-memory copy of the FAT. It is loaded whole at Open
// (4 bytes per cluster at most: 4 MiB for a million clusters), changed in
// memory, and written back sector by sector: only the sectors marked dirty
// are written, to every FAT copy, first all of copy 0, then all of copy 1.
//
// Clusters freed since the last flush are quarantined: they are counted as
// free but not handed out again until the flush that frees them on disk has
// completed. Without that, a crash in the middle of a flush could leave the
// old owner's chain and the new owner's chain crossing on disk.
type fatTable struct {
	typ        Type
	raw        []byte
	count      uint32 // entries: valid cluster numbers are 2..count-1
	sectorSize int

	dirty  []uint64 // one bit per sector of raw that differs from disk
	ndirty int

	free uint32 // free clusters, quarantined ones included
	next uint32 // where the next search for a free cluster starts

	quarantine  []uint64 // one bit per cluster
	quarantined []uint32

	// merged is a cluster that two others point to (0 if none): two chains
	// that run together, which only damage makes. Found at load.
	merged uint32
}

const (
	eoc32 = 0x0FFFFFFF
	bad32 = 0x0FFFFFF7
)

func newFATTable(g *geometry, raw []byte) *fatTable {
	t := &fatTable{
		typ:        g.typ,
		raw:        raw,
		count:      g.clusterCount + 2,
		sectorSize: g.bytesPerSector,
	}
	sectors := (len(raw) + t.sectorSize - 1) / t.sectorSize
	t.dirty = make([]uint64, (sectors+63)/64)
	t.quarantine = make([]uint64, (int(t.count)+63)/64)
	pointed := make([]uint64, (int(t.count)+63)/64)
	for c := uint32(2); c < t.count; c++ {
		v := t.get(c)
		if v == 0 {
			t.free++
			continue
		}
		if t.valid(v) && v != c {
			if pointed[v/64]&(1<<(v%64)) != 0 && t.merged == 0 {
				t.merged = v
			}
			pointed[v/64] |= 1 << (v % 64)
		}
	}
	t.next = 2
	return t
}

// Volume state bits in FAT[1] (FAT16 and FAT32; Microsoft's FAT
// specification): set means clean, and no error, respectively. FAT12 has
// none; the boot sector's state byte stands in for it (see volstate.go).
func (t *fatTable) stateBits() (clean, noError uint32) {
	switch t.typ {
	case FAT16:
		return 0x8000, 0x4000
	case FAT32:
		return 0x08000000, 0x04000000
	}
	return 0, 0
}

// flag reports whether bit is set in FAT[1].
func (t *fatTable) flag(bit uint32) bool { return t.get(1)&bit != 0 }

// setFlag sets or clears bit in FAT[1] (marking its sector dirty when it
// changes).
func (t *fatTable) setFlag(bit uint32, on bool) {
	v := t.get(1)
	nv := v &^ bit
	if on {
		nv = v | bit
	}
	if nv != v {
		t.set(1, nv)
	}
}

// get returns the raw FAT entry of cluster c (FAT32's reserved top four
// bits removed).
func (t *fatTable) get(c uint32) uint32 {
	switch t.typ {
	case FAT12:
		off := c + c/2
		v := uint32(t.raw[off]) | uint32(t.raw[off+1])<<8
		if c&1 != 0 {
			return v >> 4
		}
		return v & 0xFFF
	case FAT16:
		return uint32(binary.LittleEndian.Uint16(t.raw[2*c:]))
	default:
		return binary.LittleEndian.Uint32(t.raw[4*c:]) & 0x0FFFFFFF
	}
}

// set stores v as the entry of cluster c and marks its sector(s) dirty.
func (t *fatTable) set(c, v uint32) {
	var off, n uint32
	switch t.typ {
	case FAT12:
		off, n = c+c/2, 2
		old := uint32(t.raw[off]) | uint32(t.raw[off+1])<<8
		if c&1 != 0 {
			old = old&0x000F | (v&0xFFF)<<4
		} else {
			old = old&0xF000 | v&0xFFF
		}
		t.raw[off] = byte(old)
		t.raw[off+1] = byte(old >> 8)
	case FAT16:
		off, n = 2*c, 2
		binary.LittleEndian.PutUint16(t.raw[off:], uint16(v))
	default:
		off, n = 4*c, 4
		old := binary.LittleEndian.Uint32(t.raw[off:])
		binary.LittleEndian.PutUint32(t.raw[off:], old&0xF0000000|v&0x0FFFFFFF)
	}
	t.markDirty(int(off), int(off+n-1))
}

func (t *fatTable) markDirty(from, to int) {
	for s := from / t.sectorSize; s <= to/t.sectorSize; s++ {
		if t.dirty[s/64]&(1<<(s%64)) == 0 {
			t.dirty[s/64] |= 1 << (s % 64)
			t.ndirty++
		}
	}
}

// eocMark is the end-of-chain value this package writes.
func (t *fatTable) eocMark() uint32 {
	switch t.typ {
	case FAT12:
		return 0xFFF
	case FAT16:
		return 0xFFFF
	}
	return eoc32
}

// isEOC reports whether an entry value ends a chain.
func (t *fatTable) isEOC(v uint32) bool {
	switch t.typ {
	case FAT12:
		return v >= 0xFF8
	case FAT16:
		return v >= 0xFFF8
	}
	return v >= 0x0FFFFFF8
}

// isBad reports whether an entry value marks a bad cluster.
func (t *fatTable) isBad(v uint32) bool {
	switch t.typ {
	case FAT12:
		return v == 0xFF7
	case FAT16:
		return v == 0xFFF7
	}
	return v == bad32
}

// valid reports whether c is a data cluster number.
func (t *fatTable) valid(c uint32) bool { return c >= 2 && c < t.count }

// follow returns the cluster after c in its chain, or end = true at the end
// of the chain. A free, bad, reserved or out-of-range successor is an error.
func (t *fatTable) follow(c uint32) (next uint32, end bool, err error) {
	v := t.get(c)
	switch {
	case t.isEOC(v):
		return 0, true, nil
	case v == 0:
		return 0, false, corruptf("cluster %d is in a chain but marked free", c)
	case t.isBad(v):
		return 0, false, corruptf("cluster %d is in a chain but marked bad", c)
	case !t.valid(v):
		return 0, false, corruptf("cluster %d points to cluster %d, outside 2..%d", c, v, t.count-1)
	}
	return v, false, nil
}

func (t *fatTable) isQuarantined(c uint32) bool {
	return t.quarantine[c/64]&(1<<(c%64)) != 0
}

// available is the number of clusters that can be allocated right now.
func (t *fatTable) available() uint32 { return t.free - uint32(len(t.quarantined)) }

// allocate takes n free clusters, links them into one chain ending in EOC
// and appends them as runs to dst. near, if valid, is the cluster the new
// chain should follow on disk (the file's last cluster), so files stay
// contiguous when possible. The caller checks available() first.
func (t *fatTable) allocate(n uint32, near uint32, dst []run) ([]run, error) {
	if n == 0 {
		return dst, nil
	}
	if t.available() < n {
		return dst, ErrNoSpace
	}
	c := t.next
	if t.valid(near) && near+1 < t.count {
		c = near + 1
	}
	if !t.valid(c) {
		c = 2
	}
	var prev uint32
	scanned := uint32(0)
	span := t.count - 2
	for n > 0 {
		if scanned > span {
			// available() said there was room; the FAT disagrees.
			return dst, fmt.Errorf("%w: free cluster count is wrong", ErrCorrupt)
		}
		if t.get(c) == 0 && !t.isQuarantined(c) {
			if prev != 0 {
				t.set(prev, c)
			}
			t.set(c, t.eocMark())
			t.free--
			n--
			if k := len(dst); k > 0 && dst[k-1].First+dst[k-1].Count == c {
				dst[k-1].Count++
			} else {
				dst = append(dst, run{First: c, Count: 1})
			}
			prev = c
			t.next = c + 1
		}
		c++
		scanned++
		if c >= t.count {
			c = 2
		}
	}
	if t.next >= t.count {
		t.next = 2
	}
	return dst, nil
}

// release marks cluster c free and quarantines it until the next flush.
func (t *fatTable) release(c uint32) {
	t.set(c, 0)
	t.free++
	t.quarantine[c/64] |= 1 << (c % 64)
	t.quarantined = append(t.quarantined, c)
}

// releaseChain frees the chain starting at c, stopping quietly at the first
// invalid link (whatever follows is not ours to free).
func (t *fatTable) releaseChain(c uint32) {
	for steps := uint32(0); t.valid(c) && steps < t.count; steps++ {
		v := t.get(c)
		if v == 0 || t.isBad(v) {
			return
		}
		t.release(c)
		if t.isEOC(v) || !t.valid(v) {
			return
		}
		c = v
	}
}

// flush writes every dirty sector to each FAT copy in copies, in order, and
// then lifts the quarantine.
func (t *fatTable) flush(copies []int64, write func(p []byte, off int64) error) error {
	if t.ndirty == 0 {
		t.endQuarantine()
		return nil
	}
	ss := t.sectorSize
	sectors := (len(t.raw) + ss - 1) / ss
	for _, base := range copies {
		for s := 0; s < sectors; {
			if t.dirty[s/64]&(1<<(s%64)) == 0 {
				if t.dirty[s/64] == 0 {
					s = (s/64 + 1) * 64
				} else {
					s++
				}
				continue
			}
			e := s + 1
			for e < sectors && t.dirty[e/64]&(1<<(e%64)) != 0 {
				e++
			}
			end := e * ss
			if end > len(t.raw) {
				end = len(t.raw)
			}
			if err := write(t.raw[s*ss:end], base+int64(s*ss)); err != nil {
				return err
			}
			s = e
		}
	}
	for i := range t.dirty {
		t.dirty[i] = 0
	}
	t.ndirty = 0
	t.endQuarantine()
	return nil
}

func (t *fatTable) endQuarantine() {
	for _, c := range t.quarantined {
		t.quarantine[c/64] &^= 1 << (c % 64)
	}
	t.quarantined = t.quarantined[:0]
}
