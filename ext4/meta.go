package ext4

import (
	"encoding/binary"
	"fmt"
)

// meta is the raw, writable view of a filesystem's global metadata: the
// primary superblock and the group descriptor table as stored, with the
// accessors of the fields the writer changes.
type meta struct {
	f        *FS
	sb       []byte // the 1024 bytes of the primary superblock
	gdt      []byte // every group descriptor, groups*descSize bytes
	gdtBlock uint64 // first block of the primary descriptor table
	seed     uint32 // metadata_csum seed
	csum     bool   // metadata_csum
	gdtCsum  bool   // gdt_csum (uninit_bg) without metadata_csum
}

// Group descriptor flags (bg_flags).
const (
	bgInodeUninit = 0x1 // inode bitmap not initialised: all free
	bgBlockUninit = 0x2 // block bitmap not initialised: computed
	bgInodeZeroed = 0x4
)

const roCompatSparseSuper = 0x1

func loadMeta(f *FS) (*meta, error) {
	m := &meta{f: f, sb: make([]byte, 1024)}
	if err := f.readAt(m.sb, 1024, 1024/uint64(f.blockSize)); err != nil {
		return nil, err
	}
	m.csum = f.roCompat&roCompatMetadataCsum != 0
	m.gdtCsum = !m.csum && f.roCompat&roCompatGdtCsum != 0
	if m.csum {
		m.seed = csumSeed(m.sb, f.incompat)
	}
	m.gdtBlock = uint64(f.firstDataBlock) + 1
	n := int64(f.groups) * f.descSize
	nblocks := (n + f.blockSize - 1) / f.blockSize
	buf := make([]byte, nblocks*f.blockSize)
	if err := f.readAt(buf, int64(m.gdtBlock)*f.blockSize, m.gdtBlock); err != nil {
		return nil, err
	}
	m.gdt = buf[:n]
	return m, nil
}

func (m *meta) gd(g uint32) []byte {
	return m.gdt[int64(g)*m.f.descSize : int64(g+1)*m.f.descSize]
}

// lohi reads a descriptor field split into a low part at lo and a high
// part at hi (present only with 64-byte descriptors); size is 2 or 4.
func (m *meta) lohi(g uint32, lo, hi, size int) uint64 {
	d := m.gd(g)
	le := binary.LittleEndian
	get := func(off int) uint64 {
		if size == 2 {
			return uint64(le.Uint16(d[off:]))
		}
		return uint64(le.Uint32(d[off:]))
	}
	v := get(lo)
	if m.f.descSize >= 64 {
		v |= get(hi) << (8 * size)
	}
	return v
}

func (m *meta) setLohi(g uint32, lo, hi, size int, v uint64) {
	d := m.gd(g)
	le := binary.LittleEndian
	put := func(off int, x uint64) {
		if size == 2 {
			le.PutUint16(d[off:], uint16(x))
		} else {
			le.PutUint32(d[off:], uint32(x))
		}
	}
	put(lo, v)
	if m.f.descSize >= 64 {
		put(hi, v>>(8*size))
	}
}

func (m *meta) blockBitmapBlock(g uint32) uint64 { return m.lohi(g, 0x0, 0x20, 4) }
func (m *meta) inodeBitmapBlock(g uint32) uint64 { return m.lohi(g, 0x4, 0x24, 4) }
func (m *meta) inodeTableBlock(g uint32) uint64  { return m.lohi(g, 0x8, 0x28, 4) }
func (m *meta) freeBlocks(g uint32) uint64       { return m.lohi(g, 0xC, 0x2C, 2) }
func (m *meta) freeInodes(g uint32) uint64       { return m.lohi(g, 0xE, 0x2E, 2) }
func (m *meta) usedDirs(g uint32) uint64         { return m.lohi(g, 0x10, 0x30, 2) }
func (m *meta) itableUnused(g uint32) uint64     { return m.lohi(g, 0x1C, 0x32, 2) }
func (m *meta) flags(g uint32) uint16            { return binary.LittleEndian.Uint16(m.gd(g)[0x12:]) }

func (m *meta) setFreeBlocks(g uint32, v uint64)   { m.setLohi(g, 0xC, 0x2C, 2, v) }
func (m *meta) setFreeInodes(g uint32, v uint64)   { m.setLohi(g, 0xE, 0x2E, 2, v) }
func (m *meta) setUsedDirs(g uint32, v uint64)     { m.setLohi(g, 0x10, 0x30, 2, v) }
func (m *meta) setItableUnused(g uint32, v uint64) { m.setLohi(g, 0x1C, 0x32, 2, v) }
func (m *meta) setFlags(g uint32, v uint16)        { binary.LittleEndian.PutUint16(m.gd(g)[0x12:], v) }

// Bitmap checksums in the descriptor (metadata_csum).
func (m *meta) blockBitmapCsum(g uint32) uint32 { return uint32(m.lohi(g, 0x18, 0x38, 2)) }
func (m *meta) inodeBitmapCsum(g uint32) uint32 { return uint32(m.lohi(g, 0x1A, 0x3A, 2)) }

// csumMask is what of a bitmap checksum the descriptor keeps: 16 bits in
// 32-byte descriptors, 32 in 64-byte ones.
func (m *meta) csumMask() uint32 {
	if m.f.descSize >= 64 {
		return 0xFFFFFFFF
	}
	return 0xFFFF
}

func (m *meta) setBlockBitmapCsum(g uint32, b []byte) {
	if m.csum {
		m.setLohi(g, 0x18, 0x38, 2, uint64(bitmapCsum(m.seed, b, int(m.f.blocksPerGroup/8))))
	}
}

func (m *meta) setInodeBitmapCsum(g uint32, b []byte) {
	if m.csum {
		m.setLohi(g, 0x1A, 0x3A, 2, uint64(bitmapCsum(m.seed, b, int(m.f.inodesPerGroup/8))))
	}
}

// groupCsum computes group g's descriptor checksum (0 when the filesystem
// has none).
func (m *meta) groupCsum(g uint32) uint16 {
	if !m.csum && !m.gdtCsum {
		return 0
	}
	return groupDescCsum(m.csum, m.seed, m.sb[0x68:0x78], g, m.gd(g))
}

func (m *meta) setGroupCsum(g uint32) {
	if m.csum || m.gdtCsum {
		binary.LittleEndian.PutUint16(m.gd(g)[gdChecksum:], m.groupCsum(g))
	}
}

// groupFirstBlock and groupBlocks give group g's block range.
func (m *meta) groupFirstBlock(g uint32) uint64 {
	return uint64(m.f.firstDataBlock) + uint64(g)*uint64(m.f.blocksPerGroup)
}

func (m *meta) groupBlocks(g uint32) uint64 {
	first := m.groupFirstBlock(g)
	return min(uint64(m.f.blocksPerGroup), m.f.blocksCount-first)
}

// inodeTableBlocks is the length of each group's inode table.
func (m *meta) inodeTableBlocks() uint64 {
	return (uint64(m.f.inodesPerGroup)*uint64(m.f.inodeSize) + uint64(m.f.blockSize) - 1) / uint64(m.f.blockSize)
}

// uninitBlockBitmap computes the block bitmap of a BLOCK_UNINIT group as
// the kernel does (ext4_init_block_bitmap): the superblock backup, the
// descriptor table and its reserved growth blocks when the group has a
// backup, the group's own bitmaps and inode table where they lie inside
// it, and the padding past the last block.
func (m *meta) uninitBlockBitmap(g uint32) []byte {
	f := m.f
	b := make([]byte, f.blockSize)
	first := m.groupFirstBlock(g)
	n := m.groupBlocks(g)
	set := func(blk uint64) {
		if blk >= first && blk < first+n {
			i := blk - first
			b[i/8] |= 1 << (i % 8)
		}
	}
	if f.hasSuperblockBackup(uint64(g)) {
		gdtBlocks := uint64((int64(f.groups)*f.descSize + f.blockSize - 1) / f.blockSize)
		res := uint64(binary.LittleEndian.Uint16(m.sb[0xCE:]))
		for i := uint64(0); i < 1+gdtBlocks+res; i++ {
			set(first + i)
		}
		if g == 0 && f.firstDataBlock == 0 && f.blockSize == 1024 {
			set(0)
		}
	}
	// Only the group's own bitmaps and table count, and only where they lie
	// inside it: a group holding other groups' metadata (a flex group's
	// first) is never left uninitialised.
	itb := m.inodeTableBlocks()
	set(m.blockBitmapBlock(g))
	set(m.inodeBitmapBlock(g))
	for i, t := uint64(0), m.inodeTableBlock(g); i < itb; i++ {
		set(t + i)
	}
	for i := n; i < uint64(len(b))*8; i++ {
		b[i/8] |= 1 << (i % 8)
	}
	return b
}

// readBitmaps returns group g's block and inode bitmaps as the filesystem
// means them (computed for uninitialised groups).
func (m *meta) readBitmaps(g uint32) (blocks, inodes []byte, err error) {
	f := m.f
	fl := m.flags(g)
	uninit := m.csum || m.gdtCsum
	if uninit && fl&bgBlockUninit != 0 {
		blocks = m.uninitBlockBitmap(g)
	} else {
		blocks = make([]byte, f.blockSize)
		if err := f.readBlock(blocks, m.blockBitmapBlock(g)); err != nil {
			return nil, nil, fmt.Errorf("group %d block bitmap: %w", g, err)
		}
	}
	inodes = make([]byte, f.blockSize)
	if uninit && fl&bgInodeUninit != 0 {
		for i := uint64(f.inodesPerGroup); i < uint64(len(inodes))*8; i++ {
			inodes[i/8] |= 1 << (i % 8)
		}
	} else if err := f.readBlock(inodes, m.inodeBitmapBlock(g)); err != nil {
		return nil, nil, fmt.Errorf("group %d inode bitmap: %w", g, err)
	}
	return blocks, inodes, nil
}

// inodeLocation is the block and offset of inode ino's record.
func (m *meta) inodeLocation(ino uint32) (blk uint64, off int64) {
	f := m.f
	g := (ino - 1) / f.inodesPerGroup
	o := int64((ino-1)%f.inodesPerGroup) * f.inodeSize
	return m.inodeTableBlock(g) + uint64(o/f.blockSize), o % f.blockSize
}

// readRawInode returns a copy of inode ino's record.
func (m *meta) readRawInode(ino uint32) ([]byte, error) {
	if ino == 0 || ino > m.f.inodesCount {
		return nil, fmt.Errorf("%w: inode %d out of range", ErrCorrupt, ino)
	}
	blk, off := m.inodeLocation(ino)
	b := make([]byte, m.f.blockSize)
	if err := m.f.readBlock(b, blk); err != nil {
		return nil, err
	}
	return append([]byte(nil), b[off:off+m.f.inodeSize]...), nil
}
