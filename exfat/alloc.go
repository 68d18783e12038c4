package exfat

import (
	"encoding/binary"
	"math/bits"
)

// dirtySectors tracks which sectors of an in-memory table differ from the
// disk, so a flush writes only those, one call per run of them.
type dirtySectors struct {
	bits       []uint64
	n          int
	sectorSize int
}

func newDirtySectors(length, sectorSize int) dirtySectors {
	s := (length + sectorSize - 1) / sectorSize
	return dirtySectors{bits: make([]uint64, (s+63)/64), sectorSize: sectorSize}
}

func (d *dirtySectors) mark(from, to int) { // bytes from..to inclusive
	for s := from / d.sectorSize; s <= to/d.sectorSize; s++ {
		if d.bits[s/64]&(1<<(s%64)) == 0 {
			d.bits[s/64] |= 1 << (s % 64)
			d.n++
		}
	}
}

// flush writes the dirty sectors of raw (which lives at off on disk) in
// ascending order and clears them.
func (d *dirtySectors) flush(raw []byte, off int64, write func([]byte, int64) error) error {
	ss := d.sectorSize
	sectors := (len(raw) + ss - 1) / ss
	for s := 0; s < sectors; {
		if d.bits[s/64]&(1<<(s%64)) == 0 {
			s++
			continue
		}
		e := s
		for e < sectors && d.bits[e/64]&(1<<(e%64)) != 0 {
			d.bits[e/64] &^= 1 << (e % 64)
			d.n--
			e++
		}
		hi := min(e*ss, len(raw))
		if err := write(raw[s*ss:hi], off+int64(s*ss)); err != nil {
			return err
		}
		s = e
	}
	return nil
}

// fatTable is the in-memory copy of the FAT in use: 4 bytes per cluster,
// loaded at Open. In exFAT the FAT only links the clusters of fragmented
// files; which clusters are free is the bitmap's business, so entries of
// free clusters and of contiguous (NoFatChain) files mean nothing.
type fatTable struct {
	raw   []byte
	count uint32 // valid clusters are 2..count-1
	dirty dirtySectors
}

func newFATTable(raw []byte, clusterCount uint32, sectorSize int) *fatTable {
	return &fatTable{raw: raw, count: clusterCount + 2, dirty: newDirtySectors(len(raw), sectorSize)}
}

func (t *fatTable) get(c uint32) uint32 { return binary.LittleEndian.Uint32(t.raw[4*c:]) }

func (t *fatTable) set(c, v uint32) {
	if t.get(c) == v {
		return
	}
	binary.LittleEndian.PutUint32(t.raw[4*c:], v)
	t.dirty.mark(int(4*c), int(4*c+3))
}

func (t *fatTable) valid(c uint32) bool { return c >= 2 && c < t.count }

// bitmap is the in-memory allocation bitmap (section 7.1): bit c-2 is set
// when cluster c is in use. It is loaded at Open and written back by
// dirty sector.
type bitmap struct {
	raw   []byte
	count uint32 // clusters in the heap
	free  uint32
	next  uint32 // index where the next search starts
	dirty dirtySectors
}

func newBitmap(raw []byte, clusterCount uint32, sectorSize int) *bitmap {
	b := &bitmap{raw: raw, count: clusterCount, dirty: newDirtySectors(len(raw), sectorSize)}
	full := int(clusterCount / 8)
	used := 0
	for _, x := range raw[:full] {
		used += bits.OnesCount8(x)
	}
	for i := uint32(full) * 8; i < clusterCount; i++ {
		if raw[i/8]&(1<<(i%8)) != 0 {
			used++
		}
	}
	b.free = clusterCount - uint32(used)
	return b
}

// used reports whether cluster c is allocated.
func (b *bitmap) used(c uint32) bool {
	i := c - 2
	return b.raw[i/8]&(1<<(i%8)) != 0
}

func (b *bitmap) setRange(first, n uint32, on bool) {
	for c := first; c < first+n; c++ {
		i := c - 2
		if on == (b.raw[i/8]&(1<<(i%8)) != 0) {
			continue
		}
		if on {
			b.raw[i/8] |= 1 << (i % 8)
			b.free--
		} else {
			b.raw[i/8] &^= 1 << (i % 8)
			b.free++
		}
	}
	if n > 0 {
		b.dirty.mark(int((first-2)/8), int((first+n-3)/8))
	}
}

// freeRunAt returns how many clusters from c on (at most max) are free.
func (b *bitmap) freeRunAt(c, max uint32) uint32 {
	n := uint32(0)
	for n < max && c+n-2 < b.count && !b.used(c+n) {
		n++
	}
	return n
}

// findRun finds the first run of n free clusters at or after index from
// (wrapping around), or the longest run if none is that long.
func (b *bitmap) findRun(n uint32, from uint32) (first, length uint32) {
	var bestFirst, bestLen uint32
	for pass := 0; pass < 2; pass++ {
		lo, hi := from, b.count
		if pass == 1 {
			lo, hi = 0, min(from+n, b.count)
		}
		i := lo
		for i < hi {
			// Skip whole bytes in use.
			if i%8 == 0 && i+8 <= hi && b.raw[i/8] == 0xFF {
				i += 8
				continue
			}
			if b.raw[i/8]&(1<<(i%8)) != 0 {
				i++
				continue
			}
			s := i
			for i < b.count && i-s < n && b.raw[i/8]&(1<<(i%8)) == 0 {
				i++
			}
			if i-s >= n {
				return s + 2, n
			}
			if i-s > bestLen {
				bestFirst, bestLen = s+2, i-s
			}
		}
	}
	return bestFirst, bestLen
}

// allocate marks n clusters in use and returns them as runs, preferring
// one contiguous run starting at near (when near is free), then the first
// run long enough, then pieces. The caller has checked that n are free.
func (b *bitmap) allocate(n, near uint32) []run {
	var runs []run
	if near >= 2 && near-2 < b.count {
		if k := b.freeRunAt(near, n); k == n {
			b.setRange(near, n, true)
			b.next = near - 2 + n
			return []run{{First: near, Count: n}}
		}
	}
	for n > 0 {
		first, k := b.findRun(n, b.next%b.count)
		if k == 0 {
			break // cannot happen when the caller checked the free count
		}
		b.setRange(first, k, true)
		runs = append(runs, run{First: first, Count: k})
		b.next = first - 2 + k
		n -= k
	}
	return runs
}

// NewCluster takes one free cluster, for a new directory.
func (b *backend) NewCluster() (uint32, error) {
	runs, err := b.fs().allocate(1, 0)
	if err != nil {
		return 0, err
	}
	return runs[0].First, nil
}
