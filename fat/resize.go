package fat

import (
	"encoding/binary"
	"fmt"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// Grow raises the size the FAT filesystem on dev declares towards
// newSize bytes (dev holds at least newSize) and returns the size it
// declares now. No data moves, and no cluster is renumbered.
//
// The FAT bounds what that allows: each copy has room for as many
// entries as its sectors hold, and mkfs rounds it up only to a whole
// sector (a few hundred clusters). When the request needs more, the
// FAT copies are merged into one FAT that spans them all (two copies:
// twice the room), where the data region already starts: the mirror copy
// is given up, which FAT allows (NumFATs 1; fsck.fat, Linux and Windows
// read such volumes) and which costs only the redundancy a driver never
// uses to recover. More than that would need a bigger FAT in front of
// the data region, which moves every cluster: not done. The FAT type
// stays (a FAT12/16 volume stops below its type's cluster limit). So the
// filesystem grows to the smallest of newSize, that room and the type's
// limit, and the rest of the device stays unused.
//
// Order, for crash safety: the FAT entries of the new clusters are made
// free (they lie beyond the old end, which no reader looks at; on a merge
// the mirror copy is cleared, which readers of the first copy do not
// see), then the backup boot sector (FAT32), then the primary one: the
// single sector write that makes the new clusters part of the
// filesystem. The FSInfo free count comes last; it is a hint that
// fsck.fat and the drivers recount.
func Grow(dev Device, newSize int64) (int64, error) {
	boot0 := make([]byte, 512)
	if _, err := dev.ReadAt(boot0, 0); err != nil {
		return 0, err
	}
	g, err := parseBootSector(boot0, 1<<62)
	if err != nil {
		return 0, err
	}
	clusters, err := growClusters(g, newSize)
	if err != nil {
		return 0, err
	}
	merge, copyBytes, mirrors := false, g.fatSectors*int64(g.bytesPerSector), int64(g.numFATs-1)
	if want := (newSize - g.dataOffset) / int64(g.clusterSize); clusters < want && g.numFATs > 1 && (g.mirrored || g.activeFAT == 0) {
		m := *g
		m.fatSectors *= int64(g.numFATs)
		m.numFATs = 1
		if c, _ := growClusters(&m, newSize); c > clusters && (m.typ == FAT32 || m.fatSectors <= 0xFFFF) {
			g, clusters, merge = &m, c, true
		}
	}
	if clusters <= int64(g.clusterCount) {
		return g.fsBytes, nil
	}
	fsys, err := OpenWithOptions(dev, g.fsBytes, Options{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	free := fsys.Statfs().FreeClusters
	fsys.Close()

	bps := int64(g.bytesPerSector)
	added := clusters - int64(g.clusterCount)
	if merge {
		// The merged FAT: copy 0 as it is, then the old mirror copies,
		// all beyond the old end, cleared.
		if err := zeroRange(dev, g.fatOffset+copyBytes, mirrors*copyBytes); err != nil {
			return 0, err
		}
	}
	if err := freeFATEntries(dev, g, uint32(g.clusterCount)+2, uint32(clusters)+2); err != nil {
		return 0, err
	}
	if err := fatcore.SyncDevice(dev); err != nil {
		return 0, err
	}
	newTotal := g.dataOffset/bps + clusters*int64(g.sectorsPerCluster)
	if g.typ == FAT32 && g.backupBoot > 0 && g.backupBoot < g.reservedSectors {
		b := make([]byte, bps)
		if _, err := dev.ReadAt(b, int64(g.backupBoot)*bps); err == nil && binary.LittleEndian.Uint16(b[510:]) == 0xAA55 {
			setTotal(b, newTotal)
			if merge {
				setOneFAT(b, g)
			}
			if _, err := dev.WriteAt(b, int64(g.backupBoot)*bps); err != nil {
				return 0, err
			}
			if err := fatcore.SyncDevice(dev); err != nil {
				return 0, err
			}
		}
	}
	boot := make([]byte, bps)
	if _, err := dev.ReadAt(boot, 0); err != nil {
		return 0, err
	}
	setTotal(boot, newTotal)
	if merge {
		setOneFAT(boot, g)
	}
	if _, err := dev.WriteAt(boot, 0); err != nil {
		return 0, err
	}
	if err := fatcore.SyncDevice(dev); err != nil {
		return 0, err
	}
	if g.typ == FAT32 && g.fsInfoSector > 0 {
		b := make([]byte, bps)
		off := int64(g.fsInfoSector) * bps
		if _, err := dev.ReadAt(b, off); err == nil && binary.LittleEndian.Uint32(b[0:]) == 0x41615252 {
			binary.LittleEndian.PutUint32(b[488:], uint32(int64(free)+added))
			if _, err := dev.WriteAt(b, off); err != nil {
				return 0, err
			}
		}
	}
	return newTotal * bps, nil
}

// GrowRoom is the largest size Grow can give the FAT filesystem whose
// boot sector is boot, on a device as large as needed.
func GrowRoom(boot []byte) (int64, error) {
	g, err := parseBootSector(boot, 1<<62)
	if err != nil {
		return 0, err
	}
	c := fatRoom(g)
	return g.dataOffset + c*int64(g.clusterSize), nil
}

// growClusters is the cluster count Grow gives g for newSize bytes.
func growClusters(g *geometry, newSize int64) (int64, error) {
	if newSize < g.dataOffset {
		return 0, fmt.Errorf("fat: grow to %d bytes: fewer than its %d-byte metadata", newSize, g.dataOffset)
	}
	c := (newSize - g.dataOffset) / int64(g.clusterSize)
	return min(c, fatRoom(g)), nil
}

// fatRoom is the most clusters g's FATs and type allow.
func fatRoom(g *geometry) int64 {
	bits := int64(entryBits(g.typ))
	c := g.fatSectors*int64(g.bytesPerSector)*8/bits - 2
	switch g.typ {
	case FAT12:
		c = min(c, fat12MaxClusters)
	case FAT16:
		c = min(c, fat16MaxClusters)
	default:
		c = min(c, fat32MaxClusters)
	}
	// A FAT that already names more clusters than it holds (never made
	// by mkfs) is not grown.
	return max(c, int64(g.clusterCount))
}

func entryBits(t Type) int {
	switch t {
	case FAT12:
		return 12
	case FAT16:
		return 16
	}
	return 32
}

// freeFATEntries sets the entries of clusters [from, to) to free in
// every FAT copy, writing only the bytes that change.
func freeFATEntries(dev Device, g *geometry, from, to uint32) error {
	bits := int64(entryBits(g.typ))
	lo := int64(from) * bits / 8
	hi := (int64(to)*bits + 7) / 8
	for i := 0; i < g.numFATs; i++ {
		off := g.fatCopyOffset(i)
		b := make([]byte, hi-lo)
		if _, err := dev.ReadAt(b, off+lo); err != nil {
			return err
		}
		changed := false
		for c := from; c < to; c++ {
			if clearEntry(b, g.typ, int64(c), lo) {
				changed = true
			}
		}
		if changed {
			if _, err := dev.WriteAt(b, off+lo); err != nil {
				return err
			}
		}
	}
	return nil
}

// clearEntry zeroes entry c in b, which holds the FAT from byte base,
// and reports whether it was not zero (FAT32 keeps its 4 reserved bits).
func clearEntry(b []byte, t Type, c, base int64) bool {
	switch t {
	case FAT12:
		i := c*3/2 - base
		v := binary.LittleEndian.Uint16(b[i:])
		mask := uint16(0x0FFF)
		if c&1 == 1 {
			mask = 0xFFF0
		}
		binary.LittleEndian.PutUint16(b[i:], v&^mask)
		return v&mask != 0
	case FAT16:
		i := c*2 - base
		v := binary.LittleEndian.Uint16(b[i:])
		binary.LittleEndian.PutUint16(b[i:], 0)
		return v != 0
	}
	i := c*4 - base
	v := binary.LittleEndian.Uint32(b[i:])
	binary.LittleEndian.PutUint32(b[i:], v&0xF0000000)
	return v&0x0FFFFFFF != 0
}

// setOneFAT makes boot sector b describe g's single merged FAT.
func setOneFAT(b []byte, g *geometry) {
	b[16] = 1
	if g.typ == FAT32 {
		binary.LittleEndian.PutUint32(b[36:], uint32(g.fatSectors))
		binary.LittleEndian.PutUint16(b[40:], 0) // ExtFlags: mirroring (of one copy), FAT 0 active
		return
	}
	binary.LittleEndian.PutUint16(b[22:], uint16(g.fatSectors))
}

// zeroRange writes n zero bytes at off, a MiB at a time.
func zeroRange(dev Device, off, n int64) error {
	z := make([]byte, min(n, 1<<20))
	for n > 0 {
		k := min(n, int64(len(z)))
		if _, err := dev.WriteAt(z[:k], off); err != nil {
			return err
		}
		off, n = off+k, n-k
	}
	return nil
}
