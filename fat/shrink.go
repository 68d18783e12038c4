package fat

import (
	"encoding/binary"
	"fmt"
)

// Shrink lowers the size the FAT filesystem on dev (a device of size
// bytes) declares to at most newSize bytes, as far as whole clusters
// allow, and returns the size it declares now. Only free clusters are
// given up: every cluster in use must lie below the new end. The FAT type
// stays what it is (a FAT12/16 volume whose cluster count would cross a
// type boundary is refused), the FATs keep their size (entries beyond the
// new end are free, as fsck.fat accepts), and FAT32's backup boot sector
// and FSInfo free count follow. Nothing changes when it is already small
// enough.
func Shrink(dev Device, size, newSize int64) (int64, error) {
	fsys, err := OpenWithOptions(dev, size, Options{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	g := *fsys.g
	free := fsys.Statfs().FreeClusters
	usedEnd := fsys.UsedEnd()
	fsys.Close()
	if g.fsBytes <= newSize {
		return g.fsBytes, nil
	}
	bps := int64(g.bytesPerSector)
	dataStart := g.dataOffset / bps
	newTotal := newSize / bps
	clusters := (newTotal - dataStart) / int64(g.sectorsPerCluster)
	if clusters < 1 {
		return 0, fmt.Errorf("%w: %d bytes leave no room for data clusters", ErrCannotShrink, newSize)
	}
	clusters = min(clusters, int64(g.clusterCount))
	newTotal = dataStart + clusters*int64(g.sectorsPerCluster)
	if end := g.clusterOffset(uint32(clusters) + 2); usedEnd > end {
		return 0, fmt.Errorf("%w to %d bytes: clusters up to byte %d are in use", ErrCannotShrink, newTotal*bps, usedEnd)
	}
	if t := typeOf(clusters); t != g.typ && (g.typ != FAT32 || typeOf(int64(g.clusterCount)) == FAT32) {
		// Windows tells the type from the cluster count alone: a FAT32
		// volume with too few clusters for FAT32 is one it misreads (a
		// FAT32 made that small by mkfs.fat -F 32 already is, and may
		// shrink further).
		return 0, fmt.Errorf("%w to %d bytes: %d clusters would make this %s volume %s", ErrCannotShrink, newTotal*bps, clusters, g.typ, t)
	}
	removed := int64(g.clusterCount) - clusters
	boot := make([]byte, bps)
	if _, err := dev.ReadAt(boot, 0); err != nil {
		return 0, err
	}
	setTotal(boot, newTotal)
	if g.typ == FAT32 && g.backupBoot > 0 && g.backupBoot < g.reservedSectors {
		b := make([]byte, bps)
		if _, err := dev.ReadAt(b, int64(g.backupBoot)*bps); err == nil && binary.LittleEndian.Uint16(b[510:]) == 0xAA55 {
			setTotal(b, newTotal)
			if _, err := dev.WriteAt(b, int64(g.backupBoot)*bps); err != nil {
				return 0, err
			}
		}
	}
	if _, err := dev.WriteAt(boot, 0); err != nil {
		return 0, err
	}
	if g.typ == FAT32 && g.fsInfoSector > 0 {
		b := make([]byte, bps)
		off := int64(g.fsInfoSector) * bps
		if _, err := dev.ReadAt(b, off); err == nil && binary.LittleEndian.Uint32(b[0:]) == 0x41615252 {
			// Every cluster given up was free.
			binary.LittleEndian.PutUint32(b[488:], uint32(int64(free)-removed))
			if next := int64(binary.LittleEndian.Uint32(b[492:])); next != 0xFFFFFFFF && next > clusters+1 {
				binary.LittleEndian.PutUint32(b[492:], 0xFFFFFFFF)
			}
			if _, err := dev.WriteAt(b, off); err != nil {
				return 0, err
			}
		}
	}
	return newTotal * bps, nil
}

// typeOf is the FAT type a cluster count means.
func typeOf(clusters int64) Type {
	switch {
	case clusters <= fat12MaxClusters:
		return FAT12
	case clusters <= fat16MaxClusters:
		return FAT16
	}
	return FAT32
}

// setTotal writes the total sector count into a boot sector, in the
// 16-bit field where it fits and that field was in use, else the 32-bit.
func setTotal(b []byte, total int64) {
	if binary.LittleEndian.Uint16(b[19:]) != 0 && total < 1<<16 {
		binary.LittleEndian.PutUint16(b[19:], uint16(total))
		return
	}
	binary.LittleEndian.PutUint16(b[19:], 0)
	binary.LittleEndian.PutUint32(b[32:], uint32(total))
}
