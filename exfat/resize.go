package exfat

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// Resize makes the exFAT filesystem on dev (size bytes) declare about
// newSize bytes: fewer clusters on a shrink (only free clusters at the end
// are given up), more on a grow, and returns the size the cluster heap
// now ends at. Nothing moves: the FAT and the allocation bitmap stay where
// they are. The FAT grows into the unused space before the cluster heap
// (the heap's alignment leaves most of a MiB there: room for 256 Ki
// clusters), and a bitmap whose clusters hold too few bits is first
// copied to a run of free clusters large enough (moveBitmap), so a grow
// stops only where that space has no room for more FAT entries, or no
// such run is free (the rest of the device stays unused).
//
// Each step changes one thing a reader trusts at a time, so a kill
// between any two writes leaves a filesystem that opens, at the old or the
// new size: on a grow the bits and FAT entries past the old end are
// cleared (the FAT's new sectors too, which lie in unused space) and the
// bitmap's DataLength raised first (a bitmap longer than
// the heap needs is allowed), then the backup boot region, then the main
// one (each one write with its checksum); a shrink writes the boot
// regions first and lowers DataLength after. A change larger than the
// bitmap's slack allows (8 clusters of bits) is done in several such steps.
func Resize(dev Device, size, newSize int64) (int64, error) {
	// A shrink is refused before its first step when files lie past the
	// new end (steps stop short of a cluster in use, each one final).
	r, err := loadResizer(dev, size)
	if err != nil {
		return 0, err
	}
	if want := (newSize - r.g.heapOffset) / int64(r.g.clusterSize); want < int64(r.g.clusterCount) {
		if used := r.lastUsed(); used >= want {
			return 0, fmt.Errorf("%w to %d bytes: cluster %d is in use", ErrCannotShrink, newSize, used+2)
		}
	}
	for steps := 0; ; steps++ {
		if steps > 1<<16 {
			return 0, fmt.Errorf("exfat: resize to %d bytes: no end after %d steps", newSize, steps)
		}
		r, err := loadResizer(dev, size)
		if err != nil {
			return 0, err
		}
		end, done, err := r.step(newSize)
		if err != nil || done {
			return end, err
		}
	}
}

type resizer struct {
	dev     Device
	g       *geometry
	bm      []byte // the allocation bitmap as stored (DataLength bytes)
	bmCh    chain
	bmEntry int64 // device offset of the bitmap's directory entry
	region  []byte
	// fatLength is the FAT's length in bytes that writeBoot writes.
	fatLength int64
}

func loadResizer(dev Device, size int64) (*resizer, error) {
	fs, err := OpenWithOptions(dev, size, Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	switch {
	case fs.fromBackup:
		return nil, fmt.Errorf("%w: the main boot region is damaged: run fsck --repair first", ErrCorrupt)
	case fs.wasDirty:
		return nil, fmt.Errorf("%w: the volume is marked dirty: run fsck --repair first", ErrCorrupt)
	case fs.g.numFATs != 1:
		return nil, fmt.Errorf("%w: resizing a TexFAT volume (two FATs)", ErrUnsupported)
	}
	g := fs.g
	r := &resizer{dev: dev, g: g, bmCh: fs.bitmapCh, fatLength: fs.g.fatLength}
	cs := int64(g.clusterSize)
	slot := int64(fs.bitmapAt) * entrySize
	c, _ := fs.root.ch.At(uint32(slot / cs))
	r.bmEntry = g.clusterOffset(c) + slot%cs
	e := make([]byte, entrySize)
	if _, err := dev.ReadAt(e, r.bmEntry); err != nil {
		return nil, err
	}
	r.bm = make([]byte, binary.LittleEndian.Uint64(e[24:]))
	if err := fs.readChain(r.bmCh, r.bm, 0); err != nil {
		return nil, err
	}
	// A moved bitmap has clusters beyond its DataLength (moveBitmap
	// gives it room for the whole grow): its capacity is its whole
	// contiguous chain, the clusters in use that the FAT links on.
	for {
		last := r.bmCh.Last()
		var e [4]byte
		if _, err := dev.ReadAt(e[:], g.fatOffset+int64(last)*4); err != nil {
			return nil, err
		}
		next := binary.LittleEndian.Uint32(e[:])
		i := int64(next) - 2
		if next != last+1 || !g.validCluster(next) || i/8 >= int64(len(r.bm)) || r.bm[i/8]&(1<<(i%8)) == 0 {
			break
		}
		r.bmCh.Add(chainRun(next))
	}
	r.region = make([]byte, bootRegionSectors*g.sectorSize)
	if _, err := dev.ReadAt(r.region, 0); err != nil {
		return nil, err
	}
	return r, nil
}

// step makes one crash-safe change towards newSize; done when there.
func (r *resizer) step(newSize int64) (end int64, done bool, err error) {
	g := r.g
	cs := int64(g.clusterSize)
	old := int64(g.clusterCount)
	heapEnd := func(n int64) int64 { return g.heapOffset + n*cs }
	if newSize < g.heapOffset+cs {
		return 0, false, fmt.Errorf("%w to %d bytes: its metadata takes %d", ErrCannotShrink, newSize, g.heapOffset)
	}
	want := (newSize - g.heapOffset) / cs
	// The bitmap may be longer than the heap needs by at most a cluster
	// (what this package's reader accepts, bmLen <= count/8 + cluster):
	// a step moves the count no further than keeps that true between its
	// writes.
	switch {
	case want < old:
		n := max(want, (int64(len(r.bm))-cs)*8+8)
		if used := r.lastUsed(); used >= n {
			return 0, false, fmt.Errorf("%w to %d bytes: cluster %d is in use", ErrCannotShrink, heapEnd(want), used+2)
		}
		if err := r.writeBoot(n, newSize); err != nil {
			return 0, false, err
		}
		if err := r.setBitmapLength((n + 7) / 8); err != nil {
			return 0, false, err
		}
		return heapEnd(n), n == want, nil
	case want > old:
		stepMax := (old/8 + cs) * 8
		// The FAT may grow into the space between its end and the heap
		// (mkfs.exfat and cryptvol align the heap, leaving most of a
		// MiB there).
		fatRoom := min((g.heapOffset-g.fatOffset)/4-2, maxClusters)
		if need := (min(want, fatRoom) + 7) / 8; need > int64(r.bmCh.N)*cs {
			// The bitmap's clusters hold too few bits: moved to free
			// clusters enough for the whole grow, then the steps go on.
			moved, err := r.moveBitmap((need + cs - 1) / cs)
			if err != nil || moved {
				return heapEnd(old), false, err
			}
		}
		room := min(fatRoom, int64(r.bmCh.N)*cs*8)
		n := min(want, room, stepMax)
		if n <= old {
			return heapEnd(old), true, nil
		}
		ss := int64(g.sectorSize)
		r.fatLength = max(g.fatLength, ((n+2)*4+ss-1)/ss*ss)
		if err := r.clearPastEnd(old, n); err != nil {
			return 0, false, err
		}
		if err := r.setBitmapLength((n + 7) / 8); err != nil {
			return 0, false, err
		}
		if err := r.writeBoot(n, newSize); err != nil {
			return 0, false, err
		}
		return heapEnd(n), n == want || n == room, nil
	}
	return heapEnd(old), true, nil
}

// moveBitmap copies the allocation bitmap to a run of m free clusters of
// the heap (the bitmap must stay contiguous: the Linux driver reads it so)
// and points its directory entry there, and reports whether it found
// room. The copy marks its own clusters in use and the old ones free, and
// gets its FAT chain, before the entry's FirstCluster changes in one
// write: until then the old bitmap is the one in use, and the new
// clusters free in it; after, the old clusters are free and unreferenced.
func (r *resizer) moveBitmap(m int64) (bool, error) {
	g := r.g
	old := int64(g.clusterCount)
	inUse := func(c int64) bool { return r.bm[c/8]&(1<<(c%8)) != 0 }
	first, run := int64(-1), int64(0)
	for c := old - 1; c >= 0 && run < m; c-- {
		if inUse(c) {
			run = 0
			continue
		}
		run++
		first = c
	}
	if run < m {
		return false, nil
	}
	cs := int64(g.clusterSize)
	bm := make([]byte, m*cs)
	copy(bm, r.bm)
	for i := uint32(0); i < r.bmCh.N; i++ {
		c, _ := r.bmCh.At(i)
		bm[(c-2)/8] &^= 1 << ((c - 2) % 8)
	}
	for c := first; c < first+m; c++ {
		bm[c/8] |= 1 << (c % 8)
	}
	if _, err := r.dev.WriteAt(bm, g.clusterOffset(uint32(first+2))); err != nil {
		return false, err
	}
	fat := make([]byte, m*4)
	for i := int64(0); i < m; i++ {
		next := uint32(first + 2 + i + 1)
		if i == m-1 {
			next = eocCluster
		}
		binary.LittleEndian.PutUint32(fat[i*4:], next)
	}
	if _, err := r.dev.WriteAt(fat, g.fatOffset+(first+2)*4); err != nil {
		return false, err
	}
	if err := fatcore.SyncDevice(r.dev); err != nil {
		return false, err
	}
	var e [12]byte
	binary.LittleEndian.PutUint32(e[:], uint32(first+2))
	binary.LittleEndian.PutUint64(e[4:], uint64(len(r.bm)))
	if _, err := r.dev.WriteAt(e[:], r.bmEntry+20); err != nil {
		return false, err
	}
	return true, fatcore.SyncDevice(r.dev)
}

// lastUsed is the index of the last cluster marked in use, or -1.
func (r *resizer) lastUsed() int64 {
	n := int64(r.g.clusterCount)
	for i := (n+7)/8 - 1; i >= 0; i-- {
		b := r.bm[i]
		if i == n/8 && n%8 != 0 {
			b &= 1<<(n%8) - 1
		}
		if b != 0 {
			return i*8 + int64(7-bits.LeadingZeros8(b))
		}
	}
	return -1
}

// clearPastEnd frees clusters [old, n) in the bitmap and the FAT: they
// lie beyond the old end, where nothing is read, so the old filesystem
// does not change.
func (r *resizer) clearPastEnd(old, n int64) error {
	g := r.g
	bm := make([]byte, (n+7)/8)
	copy(bm, r.bm)
	for c := old; c < n; c++ {
		bm[c/8] &^= 1 << (c % 8)
	}
	lo := old / 8
	if err := writeChainAt(r.dev, g, r.bmCh, bm[lo:], lo); err != nil {
		return err
	}
	fat := make([]byte, r.fatLength-(old+2)*4)
	if _, err := r.dev.WriteAt(fat, g.fatOffset+(old+2)*4); err != nil {
		return err
	}
	return fatcore.SyncDevice(r.dev)
}

// setBitmapLength writes the bitmap entry's DataLength.
func (r *resizer) setBitmapLength(n int64) error {
	if n == int64(len(r.bm)) {
		return nil
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	if _, err := r.dev.WriteAt(b[:], r.bmEntry+24); err != nil {
		return err
	}
	return fatcore.SyncDevice(r.dev)
}

// writeBoot writes both boot regions for a heap of n clusters on a device
// of newSize bytes: the backup first, each in one write with its
// checksum.
func (r *resizer) writeBoot(n, newSize int64) error {
	g := r.g
	ss := g.sectorSize
	b := append([]byte(nil), r.region...)
	le := binary.LittleEndian
	le.PutUint32(b[offClusterCount:], uint32(n))
	le.PutUint32(b[offFATLength:], uint32(r.fatLength>>g.sectorShift))
	le.PutUint64(b[offVolumeLength:], uint64(max(newSize, g.heapOffset+n*int64(g.clusterSize))>>g.sectorShift))
	b[offPercentInUse] = 0xFF // unknown: drivers recount
	sum := bootChecksum(b, ss)
	for i := checksumSector * ss; i < (checksumSector+1)*ss; i += 4 {
		le.PutUint32(b[i:], sum)
	}
	if _, err := r.dev.WriteAt(b, int64(backupBootSector*ss)); err != nil {
		return err
	}
	if err := fatcore.SyncDevice(r.dev); err != nil {
		return err
	}
	if _, err := r.dev.WriteAt(b, 0); err != nil {
		return err
	}
	return fatcore.SyncDevice(r.dev)
}

func writeChainAt(dev Device, g *geometry, ch chain, p []byte, off int64) error {
	return ch.Pieces(p, off, int64(g.clusterSize), g.clusterOffset, func(p []byte, o int64) error {
		_, err := dev.WriteAt(p, o)
		return err
	})
}

func chainRun(c uint32) fatcore.Run { return fatcore.Run{First: c, Count: 1} }
