package fat

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Type is the FAT variant: the width of a FAT entry.
type Type int

// FAT variants. TypeAuto asks Format to choose the way mkfs.fat does.
const (
	TypeAuto Type = 0
	FAT12    Type = 12
	FAT16    Type = 16
	FAT32    Type = 32
)

// String returns "FAT12", "FAT16", "FAT32" or "auto".
func (t Type) String() string {
	switch t {
	case FAT12, FAT16, FAT32:
		return fmt.Sprintf("FAT%d", int(t))
	case TypeAuto:
		return "auto"
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// Cluster-count limits that decide the FAT type of an existing volume
// (Microsoft's FAT specification; Linux and dosfstools agree).
const (
	fat12MaxClusters = 4084  // fewer than 4085 clusters: FAT12
	fat16MaxClusters = 65524 // fewer than 65525 clusters: FAT16
	fat32MaxClusters = 0x0FFFFFF5 - 2
)

// geometry is everything the boot sector says about the layout, checked and
// with the derived byte offsets precomputed.
type geometry struct {
	typ               Type
	bytesPerSector    int
	sectorsPerCluster int
	clusterSize       int
	reservedSectors   int
	numFATs           int
	rootEntries       int // fixed root directory slots (FAT12/16)
	totalSectors      int64
	fatSectors        int64 // sectors per FAT copy
	media             byte
	sectorsPerTrack   int
	heads             int
	hiddenSectors     uint32

	fatOffset     int64 // byte offset of FAT copy 0
	rootDirOffset int64 // FAT12/16 fixed root directory
	rootDirBytes  int64
	dataOffset    int64  // byte offset of cluster 2
	clusterCount  uint32 // data clusters; valid numbers are 2..clusterCount+1
	fsBytes       int64  // bytes covered by the filesystem

	// FAT32 only.
	rootCluster  uint32
	fsInfoSector int
	backupBoot   int
	activeFAT    int  // FAT copy to read when mirroring is off
	mirrored     bool // all FAT copies are kept equal

	hasSerial bool
	serial    uint32
	// stateOff is the boot sector byte holding the dirty flags Linux and
	// Windows NT keep (0x25 on FAT12/16, 0x41 on FAT32); 0 without an
	// extended BPB.
	stateOff int
	label    string // from the BPB, trailing spaces removed
}

// clusterOffset returns the byte offset of cluster c (c >= 2).
func (g *geometry) clusterOffset(c uint32) int64 {
	return g.dataOffset + int64(c-2)*int64(g.clusterSize)
}

// fatCopyOffset returns the byte offset of FAT copy i.
func (g *geometry) fatCopyOffset(i int) int64 {
	return g.fatOffset + int64(i)*g.fatSectors*int64(g.bytesPerSector)
}

// maxCluster is the highest valid cluster number.
func (g *geometry) maxCluster() uint32 { return g.clusterCount + 1 }

func isPowerOfTwo(n int) bool { return n > 0 && n&(n-1) == 0 }

// parseBootSector validates a boot sector (at least 512 bytes) against the
// device size and returns the layout it describes. It never panics on any
// input; every rejection wraps ErrNotFAT or ErrCorrupt with the reason.
func parseBootSector(b []byte, devSize int64) (*geometry, error) {
	if len(b) < 512 {
		return nil, fmt.Errorf("%w: boot sector shorter than 512 bytes", ErrNotFAT)
	}
	le16 := func(o int) int { return int(binary.LittleEndian.Uint16(b[o:])) }
	le32 := func(o int) uint32 { return binary.LittleEndian.Uint32(b[o:]) }

	if b[0] != 0xEB && b[0] != 0xE9 {
		return nil, fmt.Errorf("%w: no x86 jump instruction at offset 0 (found 0x%02x)", ErrNotFAT, b[0])
	}
	g := &geometry{}
	g.bytesPerSector = le16(11)
	switch g.bytesPerSector {
	case 512, 1024, 2048, 4096:
	default:
		return nil, fmt.Errorf("%w: bytes per sector is %d (want 512, 1024, 2048 or 4096)", ErrNotFAT, g.bytesPerSector)
	}
	g.sectorsPerCluster = int(b[13])
	if !isPowerOfTwo(g.sectorsPerCluster) {
		return nil, fmt.Errorf("%w: sectors per cluster is %d (want a power of two)", ErrNotFAT, g.sectorsPerCluster)
	}
	g.clusterSize = g.sectorsPerCluster * g.bytesPerSector
	if g.clusterSize > 256<<10 {
		return nil, fmt.Errorf("%w: cluster size %d bytes is above 256 KiB", ErrNotFAT, g.clusterSize)
	}
	g.reservedSectors = le16(14)
	if g.reservedSectors < 1 {
		return nil, fmt.Errorf("%w: no reserved sectors", ErrNotFAT)
	}
	g.numFATs = int(b[16])
	if g.numFATs < 1 || g.numFATs > 4 {
		return nil, fmt.Errorf("%w: %d FAT copies (want 1 to 4)", ErrNotFAT, g.numFATs)
	}
	g.rootEntries = le16(17)
	g.totalSectors = int64(le16(19))
	if g.totalSectors == 0 {
		g.totalSectors = int64(le32(32))
	}
	g.media = b[21]
	if g.media != 0xF0 && g.media < 0xF8 {
		return nil, fmt.Errorf("%w: media descriptor 0x%02x is invalid", ErrNotFAT, g.media)
	}
	g.sectorsPerTrack = le16(24)
	g.heads = le16(26)
	g.hiddenSectors = le32(28)
	fat16Sectors := le16(22)

	var extOff int // offset of the extended BPB (drive number)
	if fat16Sectors == 0 {
		// FAT32 BPB: the 16-bit FAT size is zero and the 32-bit one follows.
		g.fatSectors = int64(le32(36))
		flags := le16(40)
		g.mirrored = flags&0x80 == 0
		g.activeFAT = flags & 0x0F
		if version := le16(42); version != 0 {
			return nil, fmt.Errorf("%w: FAT32 version %d.%d is not supported", ErrNotFAT, version>>8, version&0xFF)
		}
		g.rootCluster = le32(44)
		g.fsInfoSector = le16(48)
		g.backupBoot = le16(50)
		extOff = 64
		if g.rootEntries != 0 {
			return nil, fmt.Errorf("%w: FAT32 boot sector with %d fixed root entries", ErrCorrupt, g.rootEntries)
		}
	} else {
		g.fatSectors = int64(fat16Sectors)
		extOff = 36
		if g.rootEntries == 0 {
			return nil, fmt.Errorf("%w: FAT12/16 boot sector without root directory entries", ErrCorrupt)
		}
	}
	if g.fatSectors == 0 {
		return nil, fmt.Errorf("%w: FAT size is zero", ErrNotFAT)
	}
	if g.totalSectors == 0 {
		return nil, fmt.Errorf("%w: total sector count is zero", ErrNotFAT)
	}
	if sig := b[extOff+2]; sig == 0x28 || sig == 0x29 {
		g.stateOff = extOff + 1
	}
	switch sig := b[extOff+2]; sig {
	case 0x29:
		g.hasSerial = true
		g.serial = le32(extOff + 3)
		g.label = strings.TrimRight(string(b[extOff+7:extOff+18]), " \x00")
	case 0x28:
		g.hasSerial = true
		g.serial = le32(extOff + 3)
	}

	bps := int64(g.bytesPerSector)
	g.rootDirBytes = int64(g.rootEntries) * 32
	rootDirSectors := (g.rootDirBytes + bps - 1) / bps
	metaSectors := int64(g.reservedSectors) + int64(g.numFATs)*g.fatSectors + rootDirSectors
	if metaSectors >= g.totalSectors {
		return nil, fmt.Errorf("%w: reserved sectors, FATs and root directory (%d sectors) fill the whole volume (%d sectors)", ErrCorrupt, metaSectors, g.totalSectors)
	}
	clusters := (g.totalSectors - metaSectors) / int64(g.sectorsPerCluster)
	if clusters < 1 {
		return nil, fmt.Errorf("%w: no data clusters", ErrCorrupt)
	}
	g.fatOffset = int64(g.reservedSectors) * bps
	g.rootDirOffset = g.fatOffset + int64(g.numFATs)*g.fatSectors*bps
	g.dataOffset = g.rootDirOffset + rootDirSectors*bps
	g.fsBytes = g.totalSectors * bps

	// The FAT type follows from the cluster count, except that a FAT32
	// boot sector (16-bit FAT size zero) always means FAT32: that is how
	// Linux and fsck.fat decide, and mkfs.fat -F 32 can make small ones.
	switch {
	case fat16Sectors == 0:
		g.typ = FAT32
	case clusters <= fat12MaxClusters:
		g.typ = FAT12
	case clusters <= fat16MaxClusters:
		g.typ = FAT16
	default:
		return nil, fmt.Errorf("%w: %d clusters is too many for a FAT12/16 boot sector", ErrCorrupt, clusters)
	}
	if clusters > fat32MaxClusters {
		return nil, fmt.Errorf("%w: %d clusters is above the FAT32 limit", ErrCorrupt, clusters)
	}
	// The FAT must have an entry for every cluster (plus the two reserved).
	entryBits := int64(g.typ)
	need := ((clusters+2)*entryBits + 7) / 8
	if have := g.fatSectors * bps; have < need {
		// mkfs.fat never does this; other tools round the cluster count
		// down to what the FAT can describe, and so do we.
		fits := have*8/entryBits - 2
		if fits < 1 {
			return nil, fmt.Errorf("%w: FAT of %d bytes cannot describe any cluster", ErrCorrupt, have)
		}
		clusters = fits
	}
	g.clusterCount = uint32(clusters)

	if g.typ == FAT32 {
		if g.rootCluster < 2 || g.rootCluster > g.maxCluster() {
			return nil, fmt.Errorf("%w: FAT32 root directory cluster %d is outside 2..%d", ErrCorrupt, g.rootCluster, g.maxCluster())
		}
		if g.fsInfoSector >= g.reservedSectors || g.fsInfoSector == 0xFFFF {
			g.fsInfoSector = 0 // no usable FSInfo sector
		}
		if !g.mirrored && g.activeFAT >= g.numFATs {
			return nil, fmt.Errorf("%w: active FAT %d of %d", ErrCorrupt, g.activeFAT, g.numFATs)
		}
	} else {
		g.mirrored = true
	}
	if g.fsBytes > devSize {
		return nil, fmt.Errorf("%w: filesystem needs %d bytes but the device has only %d", ErrCorrupt, g.fsBytes, devSize)
	}
	return g, nil
}
