package fat

import "fmt"

// This file reproduces how mkfs.fat from dosfstools 4.2 chooses the layout
// of a new filesystem on a regular file with 512-byte sectors, so that a
// volume formatted here is laid out exactly like one formatted by
// `mkfs.fat IMAGE` (TestFormatMatchesMkfs compares the boot sectors field by
// field). The rules, restated from its setup_tables/establish_params:
//
//   - Total sectors are rounded down to a whole number of "tracks"; the
//     fake CHS geometry comes from the SD card recommendation below 256 MiB
//     and from LBA-assist translation above.
//   - Volumes of 512 MiB and more get FAT32; otherwise FAT12 or FAT16,
//     whichever gives more clusters, starting at 4 sectors per cluster and
//     doubling until the cluster count fits the type (FAT16 needs at least
//     4087 clusters so Windows does not mistake it for FAT12).
//   - FAT32 starts from the Microsoft table: 512 B clusters up to 260 MiB,
//     4 KiB up to 8 GiB, 8 KiB to 16 GiB, 16 KiB to 32 GiB, 32 KiB above.
//   - Above 8192 sectors, the reserved area, each FAT and the root
//     directory are padded to whole clusters so that clusters are aligned.
//   - Floppy sizes (360, 720, 1200, 1440, 2880 KiB) get the classic floppy
//     media byte, geometry, cluster size and root directory size.

const (
	mkfsMinClusters16 = 4087 // dosfstools' MIN_CLUST_16
	mkfsMinClusters32 = 65525
	mkfsMaxClusters32 = 268435446
	mkfsSectorSize    = 512
)

// layout is the complete description of a filesystem to be written.
type layout struct {
	typ               Type
	sectorsPerCluster int
	reservedSectors   int
	numFATs           int
	rootEntries       int
	totalSectors      int64
	fatSectors        int64
	media             byte
	sectorsPerTrack   int
	heads             int
	clusterCount      int64
	backupBoot        int // FAT32
	fsInfoSector      int // FAT32
}

func cdiv(a, b int64) int64 { return (a + b - 1) / b }

// mkfsLayout computes the layout mkfs.fat 4.2 would choose for a device of
// size bytes. typ may be TypeAuto; sectorsPerCluster may be 0 (auto).
func mkfsLayout(size int64, typ Type, sectorsPerCluster int) (*layout, error) {
	const ss = mkfsSectorSize
	if size < 0 {
		return nil, fmt.Errorf("%w: negative size", ErrTooSmall)
	}
	switch typ {
	case TypeAuto, FAT12, FAT16, FAT32:
	default:
		return nil, fmt.Errorf("fat: unknown FAT type %d", int(typ))
	}
	if sectorsPerCluster != 0 && (!isPowerOfTwo(sectorsPerCluster) || sectorsPerCluster > 128) {
		return nil, fmt.Errorf("fat: cluster size of %d sectors is not a power of two up to 128", sectorsPerCluster)
	}
	l := &layout{numFATs: 2, media: 0xF8}

	// establish_params: geometry, media byte, starting cluster size.
	total := size / ss
	if total <= 524288 {
		switch {
		case total <= 32768:
			l.heads = 2
		case total <= 65536:
			l.heads = 4
		case total <= 262144:
			l.heads = 8
		default:
			l.heads = 16
		}
		l.sectorsPerTrack = 32
		if total <= 4096 {
			l.sectorsPerTrack = 16
		}
	} else {
		switch {
		case total <= 16*63*1024:
			l.heads = 16
		case total <= 32*63*1024:
			l.heads = 32
		case total <= 64*63*1024:
			l.heads = 64
		case total <= 128*63*1024:
			l.heads = 128
		default:
			l.heads = 255
		}
		l.sectorsPerTrack = 63
	}
	clusterSize := 4
	rootEntries := 512
	switch size / 1024 {
	case 360:
		l.sectorsPerTrack, l.heads, l.media, clusterSize, rootEntries = 9, 2, 0xFD, 2, 112
	case 720:
		l.sectorsPerTrack, l.heads, l.media, clusterSize, rootEntries = 9, 2, 0xF9, 2, 112
	case 1200:
		l.sectorsPerTrack, l.heads, l.media, clusterSize, rootEntries = 15, 2, 0xF9, 1, 224
	case 1440:
		l.sectorsPerTrack, l.heads, l.media, clusterSize, rootEntries = 18, 2, 0xF0, 1, 224
	case 2880:
		l.sectorsPerTrack, l.heads, l.media, clusterSize, rootEntries = 36, 2, 0xF0, 2, 224
	}
	userType := typ != TypeAuto
	if typ == TypeAuto && size >= 512<<20 {
		typ = FAT32
	}
	if typ == FAT32 {
		switch {
		case total > 32*1024*1024*2:
			clusterSize = 64
		case total > 16*1024*1024*2:
			clusterSize = 32
		case total > 8*1024*1024*2:
			clusterSize = 16
		case total > 260*1024*2:
			clusterSize = 8
		default:
			clusterSize = 1
		}
		rootEntries = 0
	}

	// setup_tables.
	reserved := 1
	if typ == FAT32 {
		reserved = 32
	}
	blocks := size / 1024
	numSectors := blocks*2 + (size%1024)/ss
	if numSectors > 0xFFFFFFFF {
		numSectors = 0xFFFFFFFF
		blocks = numSectors * ss / 1024
	}
	align := true
	numSectors = numSectors / int64(l.sectorsPerTrack) * int64(l.sectorsPerTrack)
	if numSectors <= 8192 {
		align = false
	}
	alignTo := func(n, c int64) int64 {
		if !align {
			return n
		}
		return (n + c - 1) &^ (c - 1)
	}
	maxClusterSize := 128
	if sectorsPerCluster != 0 {
		clusterSize, maxClusterSize = sectorsPerCluster, sectorsPerCluster
	}
	rootDirSectors := cdiv(int64(rootEntries)*32, ss)
	nf := int64(l.numFATs)

	var clust12, clust16, clust32 int64
	var fatLen12, fatLen16, fatLen32 int64
	for clusterSize <= maxClusterSize {
		cs := int64(clusterSize)
		fatData32 := numSectors - alignTo(int64(reserved), cs)
		fatData1216 := fatData32 - alignTo(rootDirSectors, cs)

		clust12 = 2 * (fatData1216*ss + nf*3) / (2*cs*ss + nf*3)
		fatLen12 = alignTo(cdiv(((clust12+2)*3+1)>>1, ss), cs)
		clust12 = (fatData1216 - nf*fatLen12) / cs
		max12 := fatLen12 * 2 * ss / 3
		if max12 > fat12MaxClusters {
			max12 = fat12MaxClusters
		}
		if clust12 > max12 || clust12 < 0 {
			clust12 = 0
		}

		clust16 = (fatData1216*ss + nf*4) / (cs*ss + nf*2)
		fatLen16 = alignTo(cdiv((clust16+2)*2, ss), cs)
		clust16 = (fatData1216 - nf*fatLen16) / cs
		max16 := fatLen16 * ss / 2
		if max16 > fat16MaxClusters {
			max16 = fat16MaxClusters
		}
		if clust16 > max16 || clust16 < 0 {
			clust16 = 0
		}
		if clust16 != 0 && clust16 < mkfsMinClusters16 {
			clust16 = 0
		}

		clust32 = (fatData32*ss + nf*8) / (cs*ss + nf*4)
		fatLen32 = alignTo(cdiv((clust32+2)*4, ss), cs)
		clust32 = (fatData32 - nf*fatLen32) / cs
		max32 := fatLen32 * ss / 4
		if max32 > mkfsMaxClusters32 {
			max32 = mkfsMaxClusters32
		}
		if clust32 > max32 || clust32 < 0 {
			clust32 = 0
		}
		if clust32 != 0 && clust32 < mkfsMinClusters32 && !(userType && typ == FAT32) {
			clust32 = 0
		}

		if (clust12 != 0 && (typ == TypeAuto || typ == FAT12)) ||
			(clust16 != 0 && (typ == TypeAuto || typ == FAT16)) ||
			(clust32 != 0 && typ == FAT32) {
			break
		}
		clusterSize <<= 1
	}
	if typ == TypeAuto {
		typ = FAT12
		if clust16 > clust12 {
			typ = FAT16
		}
	}
	switch typ {
	case FAT12:
		l.clusterCount, l.fatSectors = clust12, fatLen12
	case FAT16:
		l.clusterCount, l.fatSectors = clust16, fatLen16
	case FAT32:
		l.clusterCount, l.fatSectors = clust32, fatLen32
		rootEntries = 0
	}
	if l.clusterCount == 0 || clusterSize > maxClusterSize {
		if sectorsPerCluster != 0 {
			return nil, fmt.Errorf("%w: no %v layout with %d-byte clusters fits %d bytes", ErrTooSmall, typ, sectorsPerCluster*ss, size)
		}
		return nil, fmt.Errorf("%w: no %v layout fits %d bytes", ErrTooSmall, typ, size)
	}
	l.typ = typ
	l.sectorsPerCluster = clusterSize
	l.reservedSectors = int(alignTo(int64(reserved), int64(clusterSize)))
	if align {
		rootEntries = int(alignTo(rootDirSectors, int64(clusterSize))) * (ss >> 5)
	}
	if typ == FAT32 {
		rootEntries = 0
		l.fsInfoSector = 1
		switch {
		case l.reservedSectors >= 7:
			l.backupBoot = 6
		case l.reservedSectors >= 4:
			l.backupBoot = l.reservedSectors - 2
		case l.reservedSectors >= 3:
			l.backupBoot = l.reservedSectors - 1
		}
	}
	l.rootEntries = rootEntries
	l.totalSectors = numSectors
	startData := int64(l.reservedSectors) + nf*l.fatSectors + cdiv(int64(rootEntries)*32, ss)
	if blocks < (startData+1)/2+32 {
		return nil, fmt.Errorf("%w: %d bytes leave too little room after the FATs", ErrTooSmall, size)
	}
	return l, nil
}
