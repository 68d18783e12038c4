package ext4

import (
	"encoding/binary"
	"hash/crc32"
)

// Checksums of metadata_csum filesystems (and the older crc16 group
// descriptor checksum of gdt_csum/uninit_bg). The kernel's crc32c is the
// raw CRC: no inversion on entry or exit, the caller passes the running
// value as the seed. hash/crc32's Update inverts both ways, so
// raw(seed, p) = ^Update(^seed, p).

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crc32cRaw is the kernel's crc32c(seed, p).
func crc32cRaw(seed uint32, p []byte) uint32 {
	return ^crc32.Update(^seed, castagnoli, p)
}

func crc32cLE32(seed, v uint32) uint32 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	return crc32cRaw(seed, b[:])
}

// crc16 is the CRC-16/ARC (polynomial 0x8005, reflected) of the gdt_csum
// group descriptor checksum, continued from crc.
func crc16(crc uint16, p []byte) uint16 {
	for _, b := range p {
		crc ^= uint16(b)
		for i := 0; i < 8; i++ {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xA001
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// Superblock fields the checksums and the writer use.
const (
	sbChecksumSeed = 0x270
	sbChecksum     = 0x3FC
)

// csumSeed is the seed of every metadata_csum checksum but the
// superblock's own: s_checksum_seed with the csum_seed feature (so the
// UUID can change), else crc32c(~0, uuid).
func csumSeed(sb []byte, incompat uint32) uint32 {
	if incompat&incompatCsumSeed != 0 {
		return binary.LittleEndian.Uint32(sb[sbChecksumSeed:])
	}
	return crc32cRaw(^uint32(0), sb[0x68:0x78])
}

// superblockCsum is s_checksum: crc32c(~0) of the bytes before it.
func superblockCsum(sb []byte) uint32 {
	return crc32cRaw(^uint32(0), sb[:sbChecksum])
}

// Group descriptor: bg_checksum at 0x1E, 16 bits.
const gdChecksum = 0x1E

// groupDescCsum is the checksum of descriptor d of group g: with
// metadata_csum the low 16 bits of crc32c(seed, group, descriptor with the
// checksum field as zeros); with gdt_csum crc16 over uuid, group and the
// descriptor without its checksum field.
func groupDescCsum(metadataCsum bool, seed uint32, uuid []byte, g uint32, d []byte) uint16 {
	var gb [4]byte
	binary.LittleEndian.PutUint32(gb[:], g)
	if metadataCsum {
		c := crc32cRaw(seed, gb[:])
		c = crc32cRaw(c, d[:gdChecksum])
		c = crc32cRaw(c, []byte{0, 0})
		c = crc32cRaw(c, d[gdChecksum+2:])
		return uint16(c)
	}
	c := crc16(0xFFFF, uuid)
	c = crc16(c, gb[:])
	c = crc16(c, d[:gdChecksum])
	if len(d) > gdChecksum+2 {
		c = crc16(c, d[gdChecksum+2:])
	}
	return c
}

// bitmapCsum is the crc32c of the first n bytes of a block or inode
// bitmap (clusters or inodes per group / 8).
func bitmapCsum(seed uint32, bitmap []byte, n int) uint32 {
	return crc32cRaw(seed, bitmap[:n])
}

// Inode checksum fields: i_checksum_lo (osd2) and i_checksum_hi (in the
// extra part when i_extra_isize covers it).
const (
	inoChecksumLo = 0x7C
	inoChecksumHi = 0x82
	inoGeneration = 0x64
	inoExtraIsize = 0x80
)

// inodeSeed is the seed of an inode's own checksums (inode, extent blocks,
// directory blocks): crc32c(seed, inode number, generation).
func inodeSeed(seed, ino, gen uint32) uint32 {
	return crc32cLE32(crc32cLE32(seed, ino), gen)
}

// inodeHasCsumHi reports whether the raw inode has room for i_checksum_hi.
func inodeHasCsumHi(raw []byte) bool {
	return len(raw) > 128 && 128+int(binary.LittleEndian.Uint16(raw[inoExtraIsize:])) >= inoChecksumHi+2
}

// inodeCsum is the crc32c of a raw inode (all inode_size bytes) with its
// checksum fields as zeros, seeded by inodeSeed.
func inodeCsum(seed, ino uint32, raw []byte) uint32 {
	gen := binary.LittleEndian.Uint32(raw[inoGeneration:])
	c := inodeSeed(seed, ino, gen)
	c = crc32cRaw(c, raw[:inoChecksumLo])
	c = crc32cRaw(c, []byte{0, 0})
	if !inodeHasCsumHi(raw) {
		return crc32cRaw(c, raw[inoChecksumLo+2:])
	}
	c = crc32cRaw(c, raw[inoChecksumLo+2:inoChecksumHi])
	c = crc32cRaw(c, []byte{0, 0})
	return crc32cRaw(c, raw[inoChecksumHi+2:])
}

// setInodeCsum stores inodeCsum in the raw inode (only the low 16 bits
// when the inode has no i_checksum_hi).
func setInodeCsum(seed, ino uint32, raw []byte) {
	c := inodeCsum(seed, ino, raw)
	le := binary.LittleEndian
	le.PutUint16(raw[inoChecksumLo:], uint16(c))
	if inodeHasCsumHi(raw) {
		le.PutUint16(raw[inoChecksumHi:], uint16(c>>16))
	}
}

// storedInodeCsum is the checksum the raw inode carries.
func storedInodeCsum(raw []byte) (c uint32, mask uint32) {
	le := binary.LittleEndian
	c = uint32(le.Uint16(raw[inoChecksumLo:]))
	mask = 0xFFFF
	if inodeHasCsumHi(raw) {
		c |= uint32(le.Uint16(raw[inoChecksumHi:])) << 16
		mask = 0xFFFFFFFF
	}
	return c, mask
}

// extentTailOffset is where the 4-byte et_checksum of an extent block
// lives: after eh_max entries.
func extentTailOffset(b []byte) int {
	return 12 + 12*int(binary.LittleEndian.Uint16(b[4:]))
}

// extentBlockCsum is the checksum of an extent tree block of the inode
// whose seed is iseed: crc32c of everything before the tail.
func extentBlockCsum(iseed uint32, b []byte) uint32 {
	return crc32cRaw(iseed, b[:extentTailOffset(b)])
}

// dirTailSize is the size of the fake entry at the end of every linear
// directory block of a metadata_csum filesystem (ext4_dir_entry_tail:
// inode 0, rec_len 12, name_len 0, file type 0xDE, checksum).
const dirTailSize = 12

// dirBlockCsum is the checksum a leaf directory block's tail carries.
func dirBlockCsum(iseed uint32, b []byte) uint32 {
	return crc32cRaw(iseed, b[:len(b)-dirTailSize])
}

// hasDirTail reports whether b ends in a checksum tail entry.
func hasDirTail(b []byte) bool {
	t := b[len(b)-dirTailSize:]
	le := binary.LittleEndian
	return le.Uint32(t) == 0 && le.Uint16(t[4:]) == dirTailSize && t[6] == 0 && t[7] == 0xDE
}

// setDirTail writes the tail entry and its checksum into b.
func setDirTail(iseed uint32, b []byte) {
	t := b[len(b)-dirTailSize:]
	le := binary.LittleEndian
	le.PutUint32(t, 0)
	le.PutUint16(t[4:], dirTailSize)
	t[6], t[7] = 0, 0xDE
	le.PutUint32(t[8:], dirBlockCsum(iseed, b))
}

// dxCountOffset finds the dx_countlimit of an htree block: after the
// dx_root header in the first block (".", ".." and dx_root_info), after
// the empty fake entry in an interior node. ok is false when b is not an
// htree block.
func dxCountOffset(b []byte, root bool) (off int, ok bool) {
	le := binary.LittleEndian
	if root {
		infoLen := int(b[0x1D])
		return 0x18 + infoLen, 0x18+infoLen+8 <= len(b)
	}
	if le.Uint32(b) != 0 || int(le.Uint16(b[4:])) != len(b) && !(len(b) >= 65536 && le.Uint16(b[4:]) == 0) {
		return 0, false
	}
	return 8, true
}

// dxCsum is the checksum of an htree node: crc32c over the block up to the
// used dx entries, then the dx_tail's reserved word and a zero checksum.
// The tail sits after "limit" entries. It returns the computed value and
// where the tail's checksum lives.
func dxCsum(iseed uint32, b []byte, countOff int) (c uint32, tailCsumOff int, ok bool) {
	le := binary.LittleEndian
	limit := int(le.Uint16(b[countOff:]))
	count := int(le.Uint16(b[countOff+2:]))
	tail := countOff + 8*limit
	if count > limit || tail+8 > len(b) {
		return 0, 0, false
	}
	c = crc32cRaw(iseed, b[:countOff+8*count])
	c = crc32cRaw(c, b[tail:tail+4])
	c = crc32cRaw(c, []byte{0, 0, 0, 0})
	return c, tail + 4, true
}

// xattrBlockCsum is the checksum of an extended attribute block: crc32c
// over its 64-bit block number and the block with h_checksum (0x10) zero.
func xattrBlockCsum(seed uint32, blk uint64, b []byte) uint32 {
	var nb [8]byte
	binary.LittleEndian.PutUint64(nb[:], blk)
	c := crc32cRaw(seed, nb[:])
	c = crc32cRaw(c, b[:0x10])
	c = crc32cRaw(c, []byte{0, 0, 0, 0})
	return crc32cRaw(c, b[0x14:])
}
