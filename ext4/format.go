package ext4

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"time"
)

// FormatOptions tune Format; the zero value makes what mkfs.ext4 of
// e2fsprogs 1.47 makes with its default configuration.
type FormatOptions struct {
	Label string
	// UUID of the filesystem; zero: a random one.
	UUID [16]byte
	// Now stamps the root directory and the superblock (zero: time.Now).
	Now time.Time
	// MinBlockSize raises the block size to at least this (1024, 2048 or
	// 4096; zero: mkfs's choice), as mkfs.ext4 -b does: a filesystem on a
	// device with 4096-byte sectors (a LUKS2 volume's default) needs
	// blocks no smaller, or the kernel cannot mount it from that device.
	MinBlockSize int
}

// Parameters of mke2fs's default configuration (mke2fs.conf): the
// "floppy" type below 3 MiB, "small" below 512 MiB, "big" from 4 TiB,
// "huge" from 16 TiB; 256-byte inodes; flex groups of 16; 5% reserved.
const (
	formatInodeSize = 256
	formatFlexLog   = 4
)

func formatType(size int64) (blockSize int64, inodeRatio int64) {
	switch {
	case size < 3<<20:
		return 1024, 8192
	case size < 512<<20:
		return 1024, 4096
	case size < 4<<40:
		return 4096, 16384
	case size < 16<<40:
		return 4096, 32768
	}
	return 4096, 65536
}

// defaultJournalBlocks is mke2fs's journal size for a filesystem of n
// blocks (0: none, below 2048 blocks).
func defaultJournalBlocks(n uint64) uint64 {
	switch {
	case n < 2048:
		return 0
	case n < 32768:
		return 1024
	case n < 256*1024:
		return 4096
	case n < 512*1024:
		return 8192
	case n < 4096*1024:
		return 16384
	case n < 8192*1024:
		return 32768
	case n < 16384*1024:
		return 65536
	case n < 32768*1024:
		return 131072
	}
	return 262144
}

// hasBackupGroup is sparse_super's rule: groups 0, 1 and powers of 3, 5, 7.
func hasBackupGroup(g uint64) bool {
	if g <= 1 {
		return true
	}
	for _, b := range []uint64{3, 5, 7} {
		p := b
		for p < g {
			p *= b
		}
		if p == g {
			return true
		}
	}
	return false
}

// formatGeometry is the layout mke2fs computes for a size.
type formatGeometry struct {
	bs, blocks, first, bpg, groups, gdtBlocks, rsvGdt, ipg, itb, journal uint64
}

func computeGeometry(size int64, minBlock int64) (formatGeometry, error) {
	bsz, ratio := formatType(size)
	bsz = max(bsz, minBlock)
	g := formatGeometry{bs: uint64(bsz)}
	g.blocks = uint64(size) / g.bs
	if g.bs == 1024 {
		g.first = 1
	}
	g.bpg = 8 * g.bs
	if g.blocks < 64 {
		return g, fmt.Errorf("ext4: %d bytes: %w", size, ErrTooSmall)
	}
	inodes := g.blocks * g.bs / uint64(ratio)
	for {
		g.groups = (g.blocks - g.first + g.bpg - 1) / g.bpg
		per := g.bs / 64
		g.gdtBlocks = (g.groups + per - 1) / per
		// Reserved descriptor blocks: room to grow to 1024 times the size
		// (within 2^32 blocks), at most one indirect block's worth.
		maxBlocks := min(g.blocks*1024, 1<<32-1)
		rsvGroups := (maxBlocks - g.first + g.bpg - 1) / g.bpg
		rsv := (rsvGroups+per-1)/per - g.gdtBlocks
		if int64(rsv) < 0 {
			rsv = 0
		}
		g.rsvGdt = min(rsv, g.bs/4)
		perBlock := g.bs / formatInodeSize
		g.ipg = (inodes + g.groups - 1) / g.groups
		g.ipg = max(g.ipg, 16)
		g.ipg = (g.ipg + perBlock - 1) / perBlock * perBlock
		g.ipg = (g.ipg + 7) / 8 * 8
		g.ipg = min(g.ipg, g.bpg)
		g.itb = g.ipg * formatInodeSize / g.bs
		// A last group too small for its own metadata is dropped.
		rem := (g.blocks - g.first) % g.bpg
		overhead := 2 + g.itb
		if hasBackupGroup(g.groups - 1) {
			overhead += 1 + g.gdtBlocks + g.rsvGdt
		}
		if g.groups > 1 && rem != 0 && rem < overhead+50 {
			g.blocks -= rem
			continue
		}
		if g.groups == 1 && rem != 0 && rem < overhead+50 {
			return g, fmt.Errorf("ext4: %d bytes: %w", size, ErrTooSmall)
		}
		break
	}
	g.journal = defaultJournalBlocks(g.blocks)
	return g, nil
}

// Format makes an ext4 filesystem of size bytes on dev, as mkfs.ext4 of
// e2fsprogs 1.47 does with its defaults: the same block size, inode count,
// features (has_journal ext_attr resize_inode dir_index filetype extent
// 64bit flex_bg sparse_super large_file huge_file dir_nlink extra_isize
// metadata_csum), reserved descriptor blocks, journal size, root and
// lost+found. The layout inside the groups may differ from mkfs's.
func Format(dev Device, size int64, opts FormatOptions) error {
	switch opts.MinBlockSize {
	case 0, 1024, 2048, 4096:
	default:
		return fmt.Errorf("ext4: block size %d: want 1024, 2048 or 4096", opts.MinBlockSize)
	}
	g, err := computeGeometry(size, int64(opts.MinBlockSize))
	if err != nil {
		return err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	le := binary.LittleEndian
	sb := make([]byte, 1024)
	uuid := opts.UUID
	if uuid == [16]byte{} {
		rand.Read(uuid[:])
		uuid[6] = uuid[6]&0x0F | 0x40
		uuid[8] = uuid[8]&0x3F | 0x80
	}
	inodes := g.ipg * g.groups
	if inodes > 1<<32-1 {
		return fmt.Errorf("ext4: %d inodes do not fit", inodes)
	}
	le.PutUint32(sb[0x0:], uint32(inodes))
	le.PutUint32(sb[0x4:], uint32(g.blocks))
	le.PutUint32(sb[0x150:], uint32(g.blocks>>32))
	r := g.blocks * 5 / 100
	le.PutUint32(sb[0x8:], uint32(r))
	le.PutUint32(sb[0x154:], uint32(r>>32))
	le.PutUint32(sb[0x14:], uint32(g.first))
	logBS := uint32(0)
	for (1024 << logBS) < g.bs {
		logBS++
	}
	le.PutUint32(sb[0x18:], logBS)
	le.PutUint32(sb[0x1C:], logBS)
	le.PutUint32(sb[0x20:], uint32(g.bpg))
	le.PutUint32(sb[0x24:], uint32(g.bpg))
	le.PutUint32(sb[0x28:], uint32(g.ipg))
	le.PutUint32(sb[0x30:], uint32(now.Unix()))
	le.PutUint16(sb[0x36:], 0xFFFF) // no mount-count checks
	le.PutUint16(sb[0x38:], 0xEF53)
	le.PutUint16(sb[0x3A:], 1) // clean
	le.PutUint16(sb[0x3C:], 1) // errors: continue
	le.PutUint32(sb[0x40:], uint32(now.Unix()))
	le.PutUint32(sb[0x4C:], 1) // dynamic revision
	le.PutUint32(sb[0x54:], 11)
	le.PutUint16(sb[0x58:], formatInodeSize)
	le.PutUint32(sb[0x5C:], 0x8|0x10|0x20) // ext_attr resize_inode dir_index (has_journal at the end)
	le.PutUint32(sb[0x60:], incompatFiletype|incompatExtents|incompat64bit|incompatFlexBG)
	le.PutUint32(sb[0x64:], roCompatSparseSuper|roCompatLargeFile|roCompatHugeFile|roCompatDirNlink|roCompatExtraIsize|roCompatMetadataCsum)
	copy(sb[0x68:], uuid[:])
	copy(sb[0x78:0x88], opts.Label)
	le.PutUint16(sb[0xCE:], uint16(g.rsvGdt))
	rand.Read(sb[0xEC:0xFC]) // directory hash seed
	sb[0xFC] = 1             // half_md4
	le.PutUint16(sb[0xFE:], 64)
	le.PutUint32(sb[0x100:], 0x4|0x8) // user_xattr acl
	le.PutUint32(sb[0x108:], uint32(now.Unix()))
	le.PutUint16(sb[0x15C:], 32)
	le.PutUint16(sb[0x15E:], 32)
	le.PutUint32(sb[0x160:], 0x1) // signed directory hash
	sb[0x174] = formatFlexLog
	sb[0x175] = 1 // crc32c

	// Lay the groups out: superblock copies and descriptor tables, then
	// per flex group the block bitmaps, inode bitmaps and inode tables.
	bbs := make([][]byte, g.groups)
	for i := range bbs {
		bbs[i] = make([]byte, g.bs)
	}
	isUsed := func(b uint64) bool {
		rel := b - g.first
		return bbs[rel/g.bpg][(rel%g.bpg)/8]&(1<<(rel%8)) != 0
	}
	use := func(b uint64) {
		rel := b - g.first
		bbs[rel/g.bpg][(rel%g.bpg)/8] |= 1 << (rel % 8)
	}
	groupFirst := func(i uint64) uint64 { return g.first + i*g.bpg }
	for i := uint64(0); i < g.groups; i++ {
		if hasBackupGroup(i) {
			for k := uint64(0); k < 1+g.gdtBlocks+g.rsvGdt; k++ {
				use(groupFirst(i) + k)
			}
		}
		n := min(g.bpg, g.blocks-groupFirst(i))
		for k := n; k < g.bs*8; k++ {
			bbs[i][k/8] |= 1 << (k % 8)
		}
	}
	gdt := make([]byte, g.groups*64)
	run := func(from, n uint64) (uint64, error) {
		for s := from; s+n <= g.blocks; {
			ok := true
			for k := uint64(0); k < n; k++ {
				if isUsed(s + k) {
					s += k + 1
					ok = false
					break
				}
			}
			if ok {
				for k := uint64(0); k < n; k++ {
					use(s + k)
				}
				return s, nil
			}
		}
		return 0, fmt.Errorf("ext4: no room for the group metadata")
	}
	flex := uint64(1) << formatFlexLog
	for lead := uint64(0); lead < g.groups; lead += flex {
		n := min(flex, g.groups-lead)
		cur := groupFirst(lead)
		for _, kind := range []int{0, 1, 2} {
			for i := lead; i < lead+n; i++ {
				length := uint64(1)
				if kind == 2 {
					length = g.itb
				}
				b, err := run(cur, length)
				if err != nil {
					return err
				}
				d := gdt[i*64:]
				le.PutUint32(d[kind*4:], uint32(b))
				le.PutUint32(d[0x20+kind*4:], uint32(b>>32))
				cur = b + length
			}
		}
	}
	// Write the primary superblock, descriptors and bitmaps as they are,
	// with every group initialised and every inode table zeroed; the
	// writer does the rest.
	ibs := make([]byte, g.bs)
	for k := g.ipg; k < g.bs*8; k++ {
		ibs[k/8] |= 1 << (k % 8)
	}
	zero := make([]byte, g.bs*min(g.itb, 256))
	for i := uint64(0); i < g.groups; i++ {
		d := gdt[i*64:]
		bb := uint64(le.Uint32(d)) | uint64(le.Uint32(d[0x20:]))<<32
		ib := uint64(le.Uint32(d[4:])) | uint64(le.Uint32(d[0x24:]))<<32
		it := uint64(le.Uint32(d[8:])) | uint64(le.Uint32(d[0x28:]))<<32
		if _, err := dev.WriteAt(ibs, int64(ib*g.bs)); err != nil {
			return err
		}
		for k := uint64(0); k < g.itb; k += uint64(len(zero)) / g.bs {
			n := min(uint64(len(zero)), (g.itb-k)*g.bs)
			if _, err := dev.WriteAt(zero[:n], int64((it+k)*g.bs)); err != nil {
				return err
			}
		}
		le.PutUint16(d[0x12:], bgInodeZeroed)
		le.PutUint16(d[0x1C:], uint16(g.ipg))
		le.PutUint16(d[0x32:], uint16(g.ipg>>16))
		if _, err := dev.WriteAt(bbs[i], int64(bb*g.bs)); err != nil {
			return err
		}
	}
	gdtBuf := make([]byte, g.gdtBlocks*g.bs)
	copy(gdtBuf, gdt)
	if _, err := dev.WriteAt(gdtBuf, int64((g.first+1)*g.bs)); err != nil {
		return err
	}
	if g.first == 0 {
		// Block 0 holds the boot area and the superblock: clear the area.
		if _, err := dev.WriteAt(make([]byte, 1024), 0); err != nil {
			return err
		}
	}
	le.PutUint32(sb[sbChecksum:], superblockCsum(sb))
	if _, err := dev.WriteAt(sb, 1024); err != nil {
		return err
	}
	// The reserved descriptor blocks must read as zeros until the resize
	// inode fills the primary ones.
	zb := make([]byte, g.bs)
	for i := uint64(0); i < g.groups; i++ {
		if hasBackupGroup(i) {
			for k := uint64(0); k < g.rsvGdt; k++ {
				if _, err := dev.WriteAt(zb, int64((groupFirst(i)+1+g.gdtBlocks+k)*g.bs)); err != nil {
					return err
				}
			}
		}
	}
	w, err := OpenWritable(dev, int64(g.blocks*g.bs))
	if err != nil {
		return fmt.Errorf("ext4: format: %w", err)
	}
	if err := w.populate(g, now); err != nil {
		return err
	}
	return w.finishFormat(g)
}
