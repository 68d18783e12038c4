package exfat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
)

// The boot region (specification section 3) is 12 sectors: the main boot
// sector, 8 extended boot sectors, the OEM parameters, a reserved sector
// and the boot checksum sector, which repeats a 32-bit checksum of the
// other 11. The backup boot region, sectors 12 to 23, is a copy.
const (
	bootRegionSectors = 12
	backupBootSector  = 12
	checksumSector    = 11

	// Boot sector field offsets.
	offPartitionOffset = 64
	offVolumeLength    = 72
	offFATOffset       = 80
	offFATLength       = 84
	offHeapOffset      = 88
	offClusterCount    = 92
	offRootCluster     = 96
	offSerial          = 100
	offRevision        = 104
	offVolumeFlags     = 106
	offSectorShift     = 108
	offClusterShift    = 109
	offNumFATs         = 110
	offDriveSelect     = 111
	offPercentInUse    = 112

	flagActiveFAT    = 1 << 0
	flagVolumeDirty  = 1 << 1
	flagMediaFailure = 1 << 2

	// maxClusters is the largest ClusterCount the specification allows.
	maxClusters = 0xFFFFFFF5
)

var fsName = []byte("EXFAT   ")

// geometry is what the main boot sector says about the volume's layout,
// checked against itself and the device.
type geometry struct {
	sectorShift  uint
	clusterShift uint // log2 of bytes per cluster
	sectorSize   int
	clusterSize  int
	volumeBytes  int64
	fatOffset    int64 // bytes
	fatLength    int64 // bytes, per FAT
	heapOffset   int64 // bytes
	clusterCount uint32
	rootCluster  uint32
	serial       uint32
	flags        uint16
	numFATs      int
	percentInUse byte
}

// clusterOffset is the device offset of cluster c (2 is the first).
func (g *geometry) clusterOffset(c uint32) int64 {
	return g.heapOffset + int64(c-2)<<g.clusterShift
}

// validCluster reports whether c names a cluster of the heap.
func (g *geometry) validCluster(c uint32) bool {
	return c >= 2 && uint64(c) < uint64(g.clusterCount)+2
}

// activeFATOffset is where the FAT in use starts (the second one on a
// TexFAT volume whose ActiveFat flag is set).
func (g *geometry) activeFATOffset() int64 {
	if g.numFATs == 2 && g.flags&flagActiveFAT != 0 {
		return g.fatOffset + g.fatLength
	}
	return g.fatOffset
}

// bootChecksum is the specification's boot checksum (section 3.4) over
// the first 11 sectors of a boot region, skipping VolumeFlags and
// PercentInUse, which change without the checksum being rewritten.
func bootChecksum(region []byte, sectorSize int) uint32 {
	var sum uint32
	for i, b := range region[:checksumSector*sectorSize] {
		if i == offVolumeFlags || i == offVolumeFlags+1 || i == offPercentInUse {
			continue
		}
		sum = bits.RotateLeft32(sum, -1) + uint32(b)
	}
	return sum
}

// parseBootRegion checks a whole boot region (12 sectors of the size its
// first sector gives) and returns the geometry. size is the device size;
// region must hold at least 12 * 4096 bytes or the whole device.
func parseBootRegion(region []byte, size int64) (*geometry, error) {
	b := region
	if len(b) < 512 {
		return nil, fmt.Errorf("%w: %d bytes is smaller than a boot sector", ErrNotExFAT, len(b))
	}
	if !bytes.Equal(b[3:11], fsName) {
		return nil, fmt.Errorf("%w: file system name is %q, not \"EXFAT   \"", ErrNotExFAT, b[3:11])
	}
	if b[510] != 0x55 || b[511] != 0xAA {
		return nil, fmt.Errorf("%w: boot signature %02x%02x, want 55aa", ErrNotExFAT, b[510], b[511])
	}
	for i := 11; i < 64; i++ {
		if b[i] != 0 {
			return nil, fmt.Errorf("%w: byte %d of the MustBeZero field is %#x (a FAT boot sector?)", ErrNotExFAT, i, b[i])
		}
	}
	le := binary.LittleEndian
	g := &geometry{
		sectorShift:  uint(b[offSectorShift]),
		serial:       le.Uint32(b[offSerial:]),
		flags:        le.Uint16(b[offVolumeFlags:]),
		numFATs:      int(b[offNumFATs]),
		percentInUse: b[offPercentInUse],
		clusterCount: le.Uint32(b[offClusterCount:]),
		rootCluster:  le.Uint32(b[offRootCluster:]),
	}
	if g.sectorShift < 9 || g.sectorShift > 12 {
		return nil, corruptf("BytesPerSectorShift %d is outside 9..12", g.sectorShift)
	}
	spc := uint(b[offClusterShift])
	if g.sectorShift+spc > 25 {
		return nil, corruptf("cluster size 2^%d bytes is larger than 32 MiB", g.sectorShift+spc)
	}
	g.clusterShift = g.sectorShift + spc
	g.sectorSize = 1 << g.sectorShift
	g.clusterSize = 1 << g.clusterShift
	if rev := le.Uint16(b[offRevision:]); rev>>8 != 1 {
		return nil, fmt.Errorf("%w: file system revision %d.%02d is not 1.x", ErrNotExFAT, rev>>8, rev&0xFF)
	}
	if g.numFATs != 1 && g.numFATs != 2 {
		return nil, corruptf("NumberOfFats is %d", g.numFATs)
	}
	volSectors := le.Uint64(b[offVolumeLength:])
	if volSectors > uint64(1)<<(63-g.sectorShift) {
		return nil, corruptf("VolumeLength %d sectors is impossible", volSectors)
	}
	g.volumeBytes = int64(volSectors) << g.sectorShift
	if g.volumeBytes > size {
		return nil, corruptf("volume of %d bytes is larger than the device (%d bytes)", g.volumeBytes, size)
	}
	fatOff, fatLen := le.Uint32(b[offFATOffset:]), le.Uint32(b[offFATLength:])
	heapOff := le.Uint32(b[offHeapOffset:])
	g.fatOffset = int64(fatOff) << g.sectorShift
	g.fatLength = int64(fatLen) << g.sectorShift
	g.heapOffset = int64(heapOff) << g.sectorShift
	if fatOff < 24 {
		return nil, corruptf("FatOffset %d is inside the boot regions", fatOff)
	}
	if g.clusterCount == 0 || g.clusterCount > maxClusters {
		return nil, corruptf("ClusterCount %d", g.clusterCount)
	}
	if g.fatLength < (int64(g.clusterCount)+2)*4 {
		return nil, corruptf("FAT of %d bytes cannot describe %d clusters", g.fatLength, g.clusterCount)
	}
	if g.heapOffset < g.fatOffset+int64(g.numFATs)*g.fatLength {
		return nil, corruptf("cluster heap at sector %d overlaps the FAT", heapOff)
	}
	if g.heapOffset+int64(g.clusterCount)<<g.clusterShift > g.volumeBytes {
		return nil, corruptf("cluster heap (%d clusters of %d bytes at sector %d) runs past the volume's %d sectors",
			g.clusterCount, g.clusterSize, heapOff, volSectors)
	}
	if !g.validCluster(g.rootCluster) {
		return nil, corruptf("root directory cluster %d is outside 2..%d", g.rootCluster, g.clusterCount+1)
	}
	ss := g.sectorSize
	if len(region) < bootRegionSectors*ss {
		return nil, corruptf("boot region of %d bytes is shorter than 12 sectors", len(region))
	}
	for s := 1; s <= 8; s++ {
		sec := region[s*ss : (s+1)*ss]
		if le.Uint32(sec[ss-4:]) != 0xAA550000 {
			return nil, corruptf("extended boot sector %d has no signature", s)
		}
	}
	want := bootChecksum(region, ss)
	cs := region[checksumSector*ss : (checksumSector+1)*ss]
	for i := 0; i < ss; i += 4 {
		if le.Uint32(cs[i:]) != want {
			return nil, corruptf("boot checksum sector holds %#08x at byte %d, the region sums to %#08x", le.Uint32(cs[i:]), i, want)
		}
	}
	return g, nil
}
