package ext4

import (
	"encoding/binary"
	"fmt"
)

// alloc keeps every group's block and inode bitmaps in memory, with free
// counts recomputed from them (the superblock's and descriptors' counters
// are never trusted), and writes what changed on flush.
type alloc struct {
	m          *meta
	blocks     [][]byte // block bitmap of each group
	inodes     [][]byte // inode bitmap of each group
	freeB      []uint64
	freeI      []uint64
	totalFreeB uint64
	totalFreeI uint64
	dirty      map[uint32]bool // groups whose bitmaps or descriptor changed
	// tx is the writer's pending transaction: a block freed leaves it, so
	// that no stale metadata copy lands on a block reused for data.
	tx map[uint64][]byte
	// quarantine holds the blocks freed since the last commit: on the
	// device they still belong to their old owner until the transaction
	// that frees them commits, so file data must not go there before.
	// Metadata may (allocMeta): it only reaches the device with the
	// transaction.
	quarantine map[uint64]bool
}

func loadAlloc(m *meta) (*alloc, error) {
	f := m.f
	a := &alloc{m: m, blocks: make([][]byte, f.groups), inodes: make([][]byte, f.groups),
		freeB: make([]uint64, f.groups), freeI: make([]uint64, f.groups), dirty: map[uint32]bool{},
		quarantine: map[uint64]bool{}}
	for g := uint32(0); g < f.groups; g++ {
		bb, ib, err := m.readBitmaps(g)
		if err != nil {
			return nil, err
		}
		a.blocks[g], a.inodes[g] = bb, ib
		a.freeB[g] = countClear(bb, m.groupBlocks(g))
		a.freeI[g] = countClear(ib, uint64(f.inodesPerGroup))
		a.totalFreeB += a.freeB[g]
		a.totalFreeI += a.freeI[g]
		if a.freeB[g] != m.freeBlocks(g) || a.freeI[g] != m.freeInodes(g) {
			a.dirty[g] = true // a stale counter: corrected on the first flush
		}
	}
	return a, nil
}

func countClear(b []byte, n uint64) uint64 {
	z := uint64(0)
	for i := uint64(0); i < n; i++ {
		if b[i/8]&(1<<(i%8)) == 0 {
			z++
		}
	}
	return z
}

// blockGroup splits a block number into group and index.
func (a *alloc) blockGroup(blk uint64) (uint32, uint64) {
	rel := blk - uint64(a.m.f.firstDataBlock)
	return uint32(rel / uint64(a.m.f.blocksPerGroup)), rel % uint64(a.m.f.blocksPerGroup)
}

func (a *alloc) blockFree(blk uint64) bool {
	g, i := a.blockGroup(blk)
	return a.blocks[g][i/8]&(1<<(i%8)) == 0 && (len(a.quarantine) == 0 || !a.quarantine[blk])
}

// usable is how many free blocks file data may take now.
func (a *alloc) usable() uint64 { return a.totalFreeB - uint64(len(a.quarantine)) }

// allocMeta takes one block for metadata: one freed since the last
// commit, else a free one near goal.
func (a *alloc) allocMeta(goal uint64) (uint64, error) {
	// Blocks freed since the last commit first: metadata rebuilt in the
	// same transaction (a file's block map) then reuses its own old
	// blocks instead of draining the free ones.
	for b := range a.quarantine {
		delete(a.quarantine, b)
		g, i := a.blockGroup(b)
		a.blocks[g][i/8] |= 1 << (i % 8)
		a.freeB[g]--
		a.totalFreeB--
		a.touch(g, bgBlockUninit)
		return b, nil
	}
	b, _, err := a.allocBlocks(goal, 1)
	return b, err
}

// touch marks group g changed; an uninitialised bitmap it allocates from
// becomes a real one.
func (a *alloc) touch(g uint32, flag uint16) {
	if fl := a.m.flags(g); fl&flag != 0 {
		a.m.setFlags(g, fl&^flag)
	}
	a.dirty[g] = true
}

// allocBlocks takes up to want free blocks, contiguous, starting at the
// first free block at or after goal (wrapping around). It returns the
// first block and how many it got; ErrNoSpace when none is free.
func (a *alloc) allocBlocks(goal, want uint64) (uint64, uint64, error) {
	f := a.m.f
	if a.usable() == 0 || want == 0 {
		return 0, 0, fmt.Errorf("%w", errNoSpace)
	}
	if goal < uint64(f.firstDataBlock) || goal >= f.blocksCount {
		goal = uint64(f.firstDataBlock)
	}
	start, ok := a.findFree(goal, f.blocksCount)
	if !ok {
		if start, ok = a.findFree(uint64(f.firstDataBlock), goal); !ok {
			return 0, 0, fmt.Errorf("%w", errNoSpace)
		}
	}
	n := uint64(0)
	for n < want && start+n < f.blocksCount && a.blockFree(start+n) {
		g, i := a.blockGroup(start + n)
		a.blocks[g][i/8] |= 1 << (i % 8)
		a.freeB[g]--
		a.totalFreeB--
		a.touch(g, bgBlockUninit)
		n++
	}
	return start, n, nil
}

// findFree finds the first free block in [from, to), skipping full groups.
func (a *alloc) findFree(from, to uint64) (uint64, bool) {
	for b := from; b < to; {
		g, i := a.blockGroup(b)
		if a.freeB[g] == 0 {
			b += uint64(a.m.f.blocksPerGroup) - i
			continue
		}
		bm := a.blocks[g]
		if bm[i/8] == 0xFF && i%8 == 0 {
			b += 8
			continue
		}
		if bm[i/8]&(1<<(i%8)) == 0 && (len(a.quarantine) == 0 || !a.quarantine[b]) {
			return b, true
		}
		b++
	}
	return 0, false
}

// freeBlocks returns n blocks from start to the free pool.
func (a *alloc) freeBlocks(start, n uint64) error {
	f := a.m.f
	for b := start; b < start+n; b++ {
		if b < uint64(f.firstDataBlock) || b >= f.blocksCount {
			return fmt.Errorf("%w: freeing block %d outside the filesystem", ErrCorrupt, b)
		}
		g, i := a.blockGroup(b)
		if a.blocks[g][i/8]&(1<<(i%8)) == 0 {
			return fmt.Errorf("%w: freeing block %d, which is already free", ErrCorrupt, b)
		}
		a.blocks[g][i/8] &^= 1 << (i % 8)
		a.freeB[g]++
		a.totalFreeB++
		a.touch(g, bgBlockUninit)
		delete(f.blocks, b) // a freed metadata block leaves the read cache
		delete(a.tx, b)
		a.quarantine[b] = true
	}
	return nil
}

// allocInode takes the lowest free inode of the first group from goal on
// that has one. Taking the lowest keeps bg_itable_unused exact: inodes
// past it are the never-used ones e2fsck does not scan.
func (a *alloc) allocInode(goal uint32, dir bool) (uint32, error) {
	f := a.m.f
	for k := uint32(0); k < f.groups; k++ {
		g := (goal + k) % f.groups
		if a.freeI[g] == 0 {
			continue
		}
		bm := a.inodes[g]
		for i := uint64(0); i < uint64(f.inodesPerGroup); i++ {
			if bm[i/8]&(1<<(i%8)) != 0 {
				continue
			}
			ino := g*f.inodesPerGroup + uint32(i) + 1
			if ino < a.firstIno() {
				continue // reserved inodes are never handed out
			}
			bm[i/8] |= 1 << (i % 8)
			a.freeI[g]--
			a.totalFreeI--
			a.touch(g, bgInodeUninit)
			if a.m.csum || a.m.gdtCsum {
				if unused := a.m.itableUnused(g); i >= uint64(f.inodesPerGroup)-unused {
					a.m.setItableUnused(g, uint64(f.inodesPerGroup)-i-1)
				}
			}
			if dir {
				a.m.setUsedDirs(g, a.m.usedDirs(g)+1)
			}
			return ino, nil
		}
	}
	return 0, fmt.Errorf("%w: no free inode", errNoSpace)
}

func (a *alloc) firstIno() uint32 {
	if binary.LittleEndian.Uint32(a.m.sb[0x4C:]) == 0 {
		return 11
	}
	return binary.LittleEndian.Uint32(a.m.sb[0x54:])
}

// freeInode returns inode ino to the pool.
func (a *alloc) freeInode(ino uint32, dir bool) error {
	f := a.m.f
	g := (ino - 1) / f.inodesPerGroup
	i := uint64((ino - 1) % f.inodesPerGroup)
	if a.inodes[g][i/8]&(1<<(i%8)) == 0 {
		return fmt.Errorf("%w: freeing inode %d, which is already free", ErrCorrupt, ino)
	}
	a.inodes[g][i/8] &^= 1 << (i % 8)
	a.freeI[g]++
	a.totalFreeI++
	a.touch(g, bgInodeUninit)
	if dir && a.m.usedDirs(g) > 0 {
		a.m.setUsedDirs(g, a.m.usedDirs(g)-1)
	}
	return nil
}

// flush writes the changed bitmaps, the descriptors (with their and the
// bitmaps' checksums and the recomputed free counts) and the superblock.
func (a *alloc) flush(dev blockWriter) error {
	m, f := a.m, a.m.f
	if len(a.dirty) == 0 {
		return nil
	}
	gdBlocks := map[int64]bool{}
	for g := range a.dirty {
		if m.flags(g)&bgBlockUninit == 0 {
			if err := dev.writeBlock(m.blockBitmapBlock(g), a.blocks[g]); err != nil {
				return err
			}
		}
		if m.flags(g)&bgInodeUninit == 0 {
			if err := dev.writeBlock(m.inodeBitmapBlock(g), a.inodes[g]); err != nil {
				return err
			}
		}
		m.setBlockBitmapCsum(g, a.blocks[g])
		m.setInodeBitmapCsum(g, a.inodes[g])
		m.setFreeBlocks(g, a.freeB[g])
		m.setFreeInodes(g, a.freeI[g])
		m.setGroupCsum(g)
		gdBlocks[int64(g)*f.descSize/f.blockSize] = true
	}
	for i := range gdBlocks {
		lo := i * f.blockSize
		b := make([]byte, f.blockSize)
		copy(b, m.gdt[lo:min(int64(len(m.gdt)), lo+f.blockSize)])
		if err := dev.writeBlock(m.gdtBlock+uint64(i), b); err != nil {
			return err
		}
	}
	clear(a.dirty)
	return a.flushSuper(dev)
}

// flushSuper writes the primary superblock with the free counts.
func (a *alloc) flushSuper(dev blockWriter) error {
	m, f := a.m, a.m.f
	le := binary.LittleEndian
	le.PutUint32(m.sb[0xC:], uint32(a.totalFreeB))
	if f.incompat&incompat64bit != 0 {
		le.PutUint32(m.sb[0x158:], uint32(a.totalFreeB>>32))
	}
	le.PutUint32(m.sb[0x10:], uint32(a.totalFreeI))
	if m.csum {
		le.PutUint32(m.sb[sbChecksum:], superblockCsum(m.sb))
	}
	f.freeBlocks, f.freeInodes = a.totalFreeB, uint32(a.totalFreeI)
	return dev.writeAt(m.sb, 1024)
}
