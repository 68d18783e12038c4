package ext4

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Sentinel errors; every error the package returns wraps one of these or
// an io/fs sentinel.
var (
	// ErrNotExt means there is no ext2/3/4 superblock at offset 1024.
	ErrNotExt = errors.New("ext4: not an ext2/3/4 filesystem")
	// ErrCorrupt means an on-disk structure is inconsistent or points
	// outside the filesystem.
	ErrCorrupt = errors.New("ext4: corrupt filesystem")
	// ErrUnsupported means the filesystem or file uses a feature this
	// reader does not implement.
	ErrUnsupported = errors.New("ext4: unsupported feature")
)

// Feature bits (the superblock's s_feature_*).
const (
	compatHasJournal = 0x4

	incompatCompression = 0x1
	incompatFiletype    = 0x2
	incompatRecover     = 0x4
	incompatJournalDev  = 0x8
	incompatMetaBG      = 0x10
	incompatExtents     = 0x40
	incompat64bit       = 0x80
	incompatMMP         = 0x100
	incompatFlexBG      = 0x200
	incompatEAInode     = 0x400
	incompatDirData     = 0x1000
	incompatCsumSeed    = 0x2000
	incompatLargeDir    = 0x4000
	incompatInlineData  = 0x8000
	incompatEncrypt     = 0x10000
	incompatCasefold    = 0x20000

	incompatKnown = incompatFiletype | incompatRecover | incompatMetaBG | incompatExtents |
		incompat64bit | incompatMMP | incompatFlexBG | incompatEAInode | incompatCsumSeed |
		incompatLargeDir | incompatInlineData | incompatEncrypt | incompatCasefold

	roCompatHugeFile     = 0x8
	roCompatGdtCsum      = 0x10
	roCompatDirNlink     = 0x20
	roCompatExtraIsize   = 0x40
	roCompatMetadataCsum = 0x400
)

// FS is an open ext2/3/4 filesystem.
type FS struct {
	dev  io.ReaderAt
	size int64

	blockSize      int64
	blocksCount    uint64
	freeBlocks     uint64
	reservedBlocks uint64
	inodesCount    uint32
	freeInodes     uint32
	inodesPerGroup uint32
	blocksPerGroup uint32
	firstDataBlock uint32
	inodeSize      int64
	groups         uint32
	descSize       int64
	compat         uint32
	incompat       uint32
	roCompat       uint32
	label          string
	uuid           [16]byte
	groupTables    []uint64 // inode table block of each group

	mu     sync.Mutex
	dirs   map[uint32]*dirCache
	blocks map[uint64][]byte // small cache of metadata blocks
}

// Open reads the superblock and group descriptors of the filesystem on dev.
func Open(dev io.ReaderAt, size int64) (*FS, error) {
	sb := make([]byte, 1024)
	if n, err := dev.ReadAt(sb, 1024); n < len(sb) {
		if err == nil || err == io.EOF {
			return nil, ErrNotExt
		}
		return nil, err
	}
	le := binary.LittleEndian
	if le.Uint16(sb[0x38:]) != 0xEF53 {
		return nil, ErrNotExt
	}
	f := &FS{dev: dev, size: size, dirs: map[uint32]*dirCache{}, blocks: map[uint64][]byte{}}
	logBlock := le.Uint32(sb[0x18:])
	if logBlock > 6 {
		return nil, fmt.Errorf("%w: block size 2^%d KiB", ErrCorrupt, logBlock)
	}
	f.blockSize = 1024 << logBlock
	f.inodesCount = le.Uint32(sb[0:])
	f.firstDataBlock = le.Uint32(sb[0x14:])
	f.blocksPerGroup = le.Uint32(sb[0x20:])
	f.inodesPerGroup = le.Uint32(sb[0x28:])
	f.freeInodes = le.Uint32(sb[0x10:])
	rev := le.Uint32(sb[0x4C:])
	f.inodeSize = 128
	if rev >= 1 {
		f.inodeSize = int64(le.Uint16(sb[0x58:]))
		f.compat = le.Uint32(sb[0x5C:])
		f.incompat = le.Uint32(sb[0x60:])
		f.roCompat = le.Uint32(sb[0x64:])
	}
	copy(f.uuid[:], sb[0x68:0x78])
	f.label = strings.TrimRight(string(sb[0x78:0x88]), "\x00")
	f.blocksCount = uint64(le.Uint32(sb[4:]))
	f.reservedBlocks = uint64(le.Uint32(sb[8:]))
	f.freeBlocks = uint64(le.Uint32(sb[0xC:]))
	f.descSize = 32
	if f.incompat&incompat64bit != 0 {
		f.blocksCount |= uint64(le.Uint32(sb[0x150:])) << 32
		f.reservedBlocks |= uint64(le.Uint32(sb[0x154:])) << 32
		f.freeBlocks |= uint64(le.Uint32(sb[0x158:])) << 32
		if ds := int64(le.Uint16(sb[0xFE:])); ds >= 64 {
			f.descSize = ds
		}
	}
	switch {
	case f.inodeSize < 128 || f.inodeSize > f.blockSize || f.inodeSize&(f.inodeSize-1) != 0:
		return nil, fmt.Errorf("%w: inode size %d", ErrCorrupt, f.inodeSize)
	case f.blocksPerGroup == 0 || f.inodesPerGroup == 0 || f.blocksCount == 0:
		return nil, fmt.Errorf("%w: empty block or inode groups", ErrCorrupt)
	case uint64(f.firstDataBlock) >= f.blocksCount:
		return nil, fmt.Errorf("%w: first data block %d", ErrCorrupt, f.firstDataBlock)
	case f.descSize > 1024 || f.descSize&(f.descSize-1) != 0:
		return nil, fmt.Errorf("%w: group descriptor size %d", ErrCorrupt, f.descSize)
	}
	if bad := f.incompat &^ incompatKnown; bad != 0 {
		what := fmt.Sprintf("incompatible features %#x", bad)
		switch {
		case bad&incompatCompression != 0:
			what = "compression"
		case bad&incompatJournalDev != 0:
			what = "an external journal device"
		case bad&incompatDirData != 0:
			what = "dirdata"
		}
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, what)
	}
	groups := (f.blocksCount - uint64(f.firstDataBlock) + uint64(f.blocksPerGroup) - 1) / uint64(f.blocksPerGroup)
	if groups > 1<<32-1 || groups*uint64(f.inodesPerGroup) < uint64(f.inodesCount) ||
		int64(groups)*f.descSize > size {
		return nil, fmt.Errorf("%w: %d block groups for %d inodes", ErrCorrupt, groups, f.inodesCount)
	}
	f.groups = uint32(groups)
	if err := f.readGroupDescriptors(sb); err != nil {
		return nil, err
	}
	return f, nil
}

// readGroupDescriptors loads the inode table location of every group. With
// meta_bg, descriptor blocks from s_first_meta_bg on live in the first
// block group of each meta group (after its superblock backup, if any).
func (f *FS) readGroupDescriptors(sb []byte) error {
	le := binary.LittleEndian
	perBlock := uint64(f.blockSize / f.descSize)
	nblocks := (uint64(f.groups) + perBlock - 1) / perBlock
	firstMeta := uint64(1<<63 - 1)
	if f.incompat&incompatMetaBG != 0 {
		firstMeta = uint64(le.Uint32(sb[0x104:]))
	}
	sbBlock := uint64(f.firstDataBlock)
	f.groupTables = make([]uint64, f.groups)
	buf := make([]byte, f.blockSize)
	for i := uint64(0); i < nblocks; i++ {
		blk := sbBlock + 1 + i
		if i >= firstMeta {
			g := i * perBlock
			blk = uint64(f.firstDataBlock) + g*uint64(f.blocksPerGroup)
			if f.hasSuperblockBackup(g) {
				blk++
			}
		}
		if err := f.readBlock(buf, blk); err != nil {
			return err
		}
		for j := uint64(0); j < perBlock && i*perBlock+j < uint64(f.groups); j++ {
			d := buf[j*uint64(f.descSize):]
			t := uint64(le.Uint32(d[8:]))
			if f.descSize >= 64 {
				t |= uint64(le.Uint32(d[0x28:])) << 32
			}
			f.groupTables[i*perBlock+j] = t
		}
	}
	return nil
}

// hasSuperblockBackup reports whether group g holds a superblock copy:
// every group without sparse_super, else groups 0, 1 and powers of 3, 5, 7.
func (f *FS) hasSuperblockBackup(g uint64) bool {
	if f.roCompat&0x1 == 0 || g <= 1 {
		return true
	}
	for _, base := range []uint64{3, 5, 7} {
		p := base
		for p < g {
			p *= base
		}
		if p == g {
			return true
		}
	}
	return false
}

// readBlock reads block blk into p (len(p) <= blockSize).
func (f *FS) readBlock(p []byte, blk uint64) error {
	return f.readAt(p, int64(blk)*f.blockSize, blk)
}

// readAt reads exactly len(p) bytes at off, which must lie inside the
// filesystem; blk names the block for the error message.
func (f *FS) readAt(p []byte, off int64, blk uint64) error {
	if blk >= f.blocksCount || off < 0 || off+int64(len(p)) > f.size {
		return fmt.Errorf("%w: block %d outside the filesystem", ErrCorrupt, blk)
	}
	n, err := f.dev.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// cachedBlock returns a metadata block, reading it once. The cache is
// bounded; it is cleared when full (metadata access is local, so the
// working set refills it quickly). Callers hold f.mu.
func (f *FS) cachedBlock(blk uint64) ([]byte, error) {
	if b, ok := f.blocks[blk]; ok {
		return b, nil
	}
	b := make([]byte, f.blockSize)
	if err := f.readBlock(b, blk); err != nil {
		return nil, err
	}
	if int64(len(f.blocks))*f.blockSize > 8<<20 {
		clear(f.blocks)
	}
	f.blocks[blk] = b
	return b, nil
}

// Label is the volume name (e2label).
func (f *FS) Label() string { return f.label }

// UUID is the filesystem UUID as blkid prints it.
func (f *FS) UUID() string {
	u := f.uuid
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// Type is "ext2", "ext3" or "ext4", named as blkid names it.
func (f *FS) Type() string {
	switch {
	case f.incompat&(incompatExtents|incompat64bit|incompatFlexBG|incompatInlineData|incompatLargeDir) != 0 ||
		f.roCompat&(roCompatHugeFile|roCompatDirNlink|roCompatExtraIsize|roCompatMetadataCsum|roCompatGdtCsum) != 0:
		return "ext4"
	case f.compat&compatHasJournal != 0:
		return "ext3"
	}
	return "ext2"
}

// BlockSize is the filesystem block size in bytes.
func (f *FS) BlockSize() int { return int(f.blockSize) }

// Statfs is the size and use of the filesystem, from the superblock's
// counters (what df shows for it mounted).
type Statfs struct {
	BlockSize               int
	TotalBlocks, FreeBlocks uint64
	// ReservedBlocks are free blocks only root may use: Free minus
	// Reserved is what df calls available.
	ReservedBlocks        uint64
	TotalBytes, FreeBytes int64
	Inodes, FreeInodes    uint64
}

// Statfs returns the size and free space.
func (f *FS) Statfs() Statfs {
	return Statfs{
		BlockSize: int(f.blockSize), TotalBlocks: f.blocksCount, FreeBlocks: f.freeBlocks,
		ReservedBlocks: f.reservedBlocks,
		TotalBytes:     int64(f.blocksCount) * f.blockSize, FreeBytes: int64(f.freeBlocks) * f.blockSize,
		Inodes: uint64(f.inodesCount), FreeInodes: uint64(f.freeInodes),
	}
}

// Close releases the caches. The device is the caller's to close.
func (f *FS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dirs, f.blocks = map[uint32]*dirCache{}, map[uint64][]byte{}
	return nil
}
