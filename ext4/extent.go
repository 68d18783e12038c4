package ext4

import (
	"encoding/binary"
	"fmt"
)

// run maps file blocks [logical, logical+length) to device blocks from
// phys on. Unwritten runs (uninitialised extents) read as zeros; blocks
// that no run covers are holes.
type run struct {
	logical, phys, length uint64
	unwritten             bool
}

// maxTreeDepth bounds extent-tree and indirect-block recursion (ext4's
// own limit is 5 levels).
const maxTreeDepth = 5

// blockMap returns the runs of a file, in logical order. Callers hold f.mu.
func (f *FS) blockMap(in *inode) ([]run, error) {
	nblocks := uint64((in.size + f.blockSize - 1) / f.blockSize)
	var runs []run
	var err error
	if in.flags&flagExtents != 0 {
		budget := f.blocksCount // index blocks a tree may visit: fewer than exist
		err = f.walkExtents(in, in.block[:], maxTreeDepth, &runs, &budget)
	} else {
		err = f.walkBlockMap(in, nblocks, &runs)
	}
	if err != nil {
		return nil, err
	}
	// Runs must be ordered and disjoint; drop what lies past the size.
	out := runs[:0]
	var next uint64
	for _, r := range runs {
		if r.logical < next {
			return nil, fmt.Errorf("%w: inode %d: overlapping extents at block %d", ErrCorrupt, in.ino, r.logical)
		}
		if r.logical >= nblocks {
			continue
		}
		if r.logical+r.length > nblocks {
			r.length = nblocks - r.logical
		}
		if r.phys+r.length > f.blocksCount || r.phys+r.length < r.phys {
			return nil, fmt.Errorf("%w: inode %d: extent at block %d outside the filesystem", ErrCorrupt, in.ino, r.phys)
		}
		next = r.logical + r.length
		out = append(out, r)
	}
	return out, nil
}

// walkExtents collects the leaves of the extent tree node in b.
func (f *FS) walkExtents(in *inode, b []byte, depthLeft int, runs *[]run, budget *uint64) error {
	le := binary.LittleEndian
	if len(b) < 12 || le.Uint16(b) != 0xF30A {
		return fmt.Errorf("%w: inode %d: bad extent header", ErrCorrupt, in.ino)
	}
	n := int(le.Uint16(b[2:]))
	depth := int(le.Uint16(b[6:]))
	if 12+12*n > len(b) || depth >= depthLeft {
		return fmt.Errorf("%w: inode %d: extent node with %d entries at depth %d", ErrCorrupt, in.ino, n, depth)
	}
	for i := 0; i < n; i++ {
		e := b[12+12*i:]
		logical := uint64(le.Uint32(e))
		if depth == 0 {
			length := uint64(le.Uint16(e[4:]))
			unwritten := false
			if length > 32768 {
				length -= 32768
				unwritten = true
			}
			phys := uint64(le.Uint16(e[6:]))<<32 | uint64(le.Uint32(e[8:]))
			if length > 0 {
				if uint64(len(*runs)) >= f.blocksCount {
					return fmt.Errorf("%w: inode %d: more extents than blocks", ErrCorrupt, in.ino)
				}
				*runs = append(*runs, run{logical: logical, phys: phys, length: length, unwritten: unwritten})
			}
			continue
		}
		if *budget == 0 {
			return fmt.Errorf("%w: inode %d: extent tree larger than the filesystem", ErrCorrupt, in.ino)
		}
		*budget--
		child := uint64(le.Uint32(e[4:])) | uint64(le.Uint16(e[8:]))<<32
		blk, err := f.cachedBlock(child)
		if err != nil {
			return fmt.Errorf("inode %d: extent index: %w", in.ino, err)
		}
		if got := int(le.Uint16(blk[6:])); got != depth-1 {
			return fmt.Errorf("%w: inode %d: extent block %d at depth %d, want %d", ErrCorrupt, in.ino, child, got, depth-1)
		}
		if err := f.walkExtents(in, blk, depth, runs, budget); err != nil {
			return err
		}
	}
	return nil
}

// walkBlockMap collects the runs of an ext2/3 block-mapped file: 12
// direct blocks, then single, double and triple indirect blocks. Block
// number 0 is a hole.
func (f *FS) walkBlockMap(in *inode, nblocks uint64, runs *[]run) error {
	le := binary.LittleEndian
	per := uint64(f.blockSize / 4)
	mapped := uint64(0) // blocks mapped: a file cannot have more than exist
	add := func(logical, phys uint64) {
		if phys == 0 {
			return
		}
		mapped++
		if k := len(*runs); k > 0 {
			r := &(*runs)[k-1]
			if r.logical+r.length == logical && r.phys+r.length == phys {
				r.length++
				return
			}
		}
		*runs = append(*runs, run{logical: logical, phys: phys, length: 1})
	}
	var walk func(blk uint64, level int, logical uint64) error
	walk = func(blk uint64, level int, logical uint64) error {
		if blk == 0 || logical >= nblocks {
			return nil
		}
		if mapped++; mapped > f.blocksCount {
			return fmt.Errorf("%w: inode %d maps more blocks than the filesystem has", ErrCorrupt, in.ino)
		}
		b, err := f.cachedBlock(blk)
		if err != nil {
			return fmt.Errorf("inode %d: indirect block: %w", in.ino, err)
		}
		span := uint64(1)
		for i := 1; i < level; i++ {
			span *= per
		}
		for i := uint64(0); i < per; i++ {
			l := logical + i*span
			if l >= nblocks {
				break
			}
			p := uint64(le.Uint32(b[4*i:]))
			if level == 1 {
				add(l, p)
				if mapped > f.blocksCount {
					return fmt.Errorf("%w: inode %d maps more blocks than the filesystem has", ErrCorrupt, in.ino)
				}
			} else if err := walk(p, level-1, l); err != nil {
				return err
			}
		}
		return nil
	}
	for i := uint64(0); i < 12 && i < nblocks; i++ {
		add(i, uint64(le.Uint32(in.block[4*i:])))
	}
	start := uint64(12)
	span := per
	for level := 1; level <= 3; level++ {
		if err := walk(uint64(le.Uint32(in.block[4*(11+level):])), level, start); err != nil {
			return err
		}
		start += span
		span *= per
	}
	return nil
}
