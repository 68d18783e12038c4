package ext4

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// A file's block map as the writer handles it: its runs (all of them,
// also any past the size) and the blocks of the tree that maps them
// (extent index and leaf blocks, or ext2/3 indirect blocks). A change
// rebuilds the tree from the runs.
type fileMap struct {
	runs []run
	tree []uint64 // blocks of the mapping structure
}

// loadMap reads the runs and tree blocks of a raw inode.
func (w *Writer) loadMap(ino uint32, raw []byte) (*fileMap, error) {
	fm := &fileMap{}
	mode := rawMode(raw) & sIFMT
	if mode != sIFREG && mode != sIFDIR && mode != sIFLNK {
		return fm, nil
	}
	flags := rawFlags(raw)
	if flags&flagInlineData != 0 {
		return nil, fmt.Errorf("%w: changing inline-data inode %d", ErrUnsupported, ino)
	}
	if mode == sIFLNK && isFastSymlink(raw, w.blockSize) {
		return fm, nil
	}
	le := binary.LittleEndian
	if flags&flagExtents != 0 {
		var walk func(node []byte, depth int) error
		walk = func(node []byte, depthLeft int) error {
			if le.Uint16(node) != 0xF30A {
				return fmt.Errorf("%w: inode %d: bad extent header", ErrCorrupt, ino)
			}
			n, depth := int(le.Uint16(node[2:])), int(le.Uint16(node[6:]))
			if 12+12*n > len(node) || depth >= depthLeft {
				return fmt.Errorf("%w: inode %d: bad extent node", ErrCorrupt, ino)
			}
			for i := 0; i < n; i++ {
				e := node[12+12*i:]
				if depth == 0 {
					r := run{logical: uint64(le.Uint32(e)), length: uint64(le.Uint16(e[4:])),
						phys: uint64(le.Uint16(e[6:]))<<32 | uint64(le.Uint32(e[8:]))}
					if r.length > 32768 {
						r.length -= 32768
						r.unwritten = true
					}
					fm.runs = append(fm.runs, r)
					continue
				}
				child := uint64(le.Uint32(e[4:])) | uint64(le.Uint16(e[8:]))<<32
				if len(fm.tree) > int(w.blocksCount) {
					return fmt.Errorf("%w: inode %d: extent tree loops", ErrCorrupt, ino)
				}
				fm.tree = append(fm.tree, child)
				b := make([]byte, w.blockSize)
				if err := w.readBlock(b, child); err != nil {
					return err
				}
				if err := walk(b, depth); err != nil {
					return err
				}
			}
			return nil
		}
		if err := walk(raw[0x28:0x28+60], maxTreeDepth); err != nil {
			return nil, err
		}
	} else {
		per := uint64(w.blockSize / 4)
		var walk func(blk uint64, level int, logical uint64) error
		walk = func(blk uint64, level int, logical uint64) error {
			if blk == 0 {
				return nil
			}
			if len(fm.tree) > int(w.blocksCount) {
				return fmt.Errorf("%w: inode %d: block map loops", ErrCorrupt, ino)
			}
			fm.tree = append(fm.tree, blk)
			b := make([]byte, w.blockSize)
			if err := w.readBlock(b, blk); err != nil {
				return err
			}
			span := uint64(1)
			for i := 1; i < level; i++ {
				span *= per
			}
			for i := uint64(0); i < per; i++ {
				p := uint64(le.Uint32(b[4*i:]))
				if level == 1 {
					fm.add(logical+i, p)
				} else if err := walk(p, level-1, logical+i*span); err != nil {
					return err
				}
			}
			return nil
		}
		ib := raw[0x28:]
		for i := uint64(0); i < 12; i++ {
			fm.add(i, uint64(le.Uint32(ib[4*i:])))
		}
		start, span := uint64(12), per
		for level := 1; level <= 3; level++ {
			if err := walk(uint64(le.Uint32(ib[4*(11+level):])), level, start); err != nil {
				return nil, err
			}
			start += span
			span *= per
		}
	}
	sort.Slice(fm.runs, func(i, j int) bool { return fm.runs[i].logical < fm.runs[j].logical })
	return fm, nil
}

// add appends one mapped block (0 is a hole) to a block-mapped file's runs.
func (fm *fileMap) add(logical, phys uint64) {
	if phys == 0 {
		return
	}
	if k := len(fm.runs); k > 0 {
		r := &fm.runs[k-1]
		if r.logical+r.length == logical && r.phys+r.length == phys {
			r.length++
			return
		}
	}
	fm.runs = append(fm.runs, run{logical: logical, phys: phys, length: 1})
}

// isFastSymlink reports whether a symlink keeps its target in i_block.
func isFastSymlink(raw []byte, blockSize int64) bool {
	le := binary.LittleEndian
	if rawFlags(raw)&(flagExtents|flagInlineData) != 0 {
		return false
	}
	blocks := uint64(le.Uint32(raw[0x1C:]))
	if rawFileACL(raw) != 0 {
		blocks -= uint64(blockSize / 512)
	}
	return blocks == 0 && rawSize(raw) < 60
}

// punch removes [from, to) from runs and returns what was there.
func punch(runs []run, from, to uint64) (kept, removed []run) {
	for _, r := range runs {
		end := r.logical + r.length
		if end <= from || r.logical >= to {
			kept = append(kept, r)
			continue
		}
		if r.logical < from {
			kept = append(kept, run{logical: r.logical, phys: r.phys, length: from - r.logical, unwritten: r.unwritten})
		}
		lo, hi := max(r.logical, from), min(end, to)
		removed = append(removed, run{logical: lo, phys: r.phys + lo - r.logical, length: hi - lo, unwritten: r.unwritten})
		if end > to {
			kept = append(kept, run{logical: to, phys: r.phys + to - r.logical, length: end - to, unwritten: r.unwritten})
		}
	}
	return kept, removed
}

// merge adds disjoint runs to runs, sorted, joining neighbours that
// continue each other on disk.
func merge(runs, add []run) []run {
	all := append(append([]run{}, runs...), add...)
	sort.Slice(all, func(i, j int) bool { return all[i].logical < all[j].logical })
	out := all[:0]
	for _, r := range all {
		if k := len(out); k > 0 {
			p := &out[k-1]
			if p.logical+p.length == r.logical && p.phys+p.length == r.phys && p.unwritten == r.unwritten {
				p.length += r.length
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// Extent limits: an initialised extent maps at most 32768 blocks, an
// unwritten one 32767 (the top bit of ee_len marks it).
const (
	maxExtentLen          = 32768
	maxUnwrittenExtentLen = 32767
)

// extentsOf splits runs into extents no longer than the limits.
func extentsOf(runs []run) []run {
	var out []run
	for _, r := range runs {
		limit := uint64(maxExtentLen)
		if r.unwritten {
			limit = maxUnwrittenExtentLen
		}
		for r.length > 0 {
			n := min(r.length, limit)
			out = append(out, run{logical: r.logical, phys: r.phys, length: n, unwritten: r.unwritten})
			r.logical, r.phys, r.length = r.logical+n, r.phys+n, r.length-n
		}
	}
	return out
}

// treeBlocksFor is how many tree blocks mapping runs needs at most.
func (w *Writer) treeBlocksFor(runs []run, extents bool) uint64 {
	if extents {
		n := uint64(len(extentsOf(runs)))
		per := uint64((w.blockSize - 12) / 12)
		total := uint64(0)
		for n > 4 {
			n = (n + per - 1) / per
			total += n
		}
		return total
	}
	// Indirect blocks: one per per-blocks of the file past the direct
	// ones, per level.
	per := uint64(w.blockSize / 4)
	var last uint64
	if k := len(runs); k > 0 {
		last = runs[k-1].logical + runs[k-1].length
	}
	if last <= 12 {
		return 0
	}
	n := last - 12
	return (n+per-1)/per + (n+per*per-1)/(per*per) + 3
}

// maxBlockMapped is the number of logical blocks an ext2/3 block map
// can address.
func (w *Writer) maxBlockMapped() uint64 {
	per := uint64(w.blockSize / 4)
	return 12 + per + per*per + per*per*per
}

// storeMap frees the old tree, builds the new one for fm.runs near goal
// and writes it, updating i_block, the flags and i_blocks of raw (the
// inode itself is written by the caller).
func (w *Writer) storeMap(ino uint32, raw []byte, fm *fileMap) error {
	for _, b := range fm.tree {
		if err := w.a.freeBlocks(b, 1); err != nil {
			return err
		}
	}
	fm.tree = nil
	goal := uint64(0)
	if len(fm.runs) > 0 {
		goal = fm.runs[0].phys
	}
	var err error
	if rawFlags(raw)&flagExtents != 0 {
		err = w.storeExtents(ino, raw, fm, goal)
	} else {
		err = w.storeBlockMap(raw, fm, goal)
	}
	if err != nil {
		return err
	}
	w.setBlockCount(raw, fm)
	return nil
}

// setBlockCount sets i_blocks (512-byte units) from the data, tree and
// xattr blocks.
func (w *Writer) setBlockCount(raw []byte, fm *fileMap) {
	n := uint64(len(fm.tree))
	for _, r := range fm.runs {
		n += r.length
	}
	if rawFileACL(raw) != 0 {
		n++
	}
	units := n * uint64(w.blockSize/512)
	le := binary.LittleEndian
	fl := rawFlags(raw) &^ flagHugeFile
	if units >= 1<<48 {
		units = n
		fl |= flagHugeFile
	}
	setRawFlags(raw, fl)
	le.PutUint32(raw[0x1C:], uint32(units))
	le.PutUint16(raw[0x74:], uint16(units>>32))
}

func (w *Writer) allocTreeBlock(goal uint64) (uint64, error) { return w.a.allocMeta(goal) }

// storeExtents writes the extent tree: in the inode when four extents
// suffice, else leaves of (blockSize-12)/12 extents under as many index
// levels as it takes for the root's four entries.
func (w *Writer) storeExtents(ino uint32, raw []byte, fm *fileMap, goal uint64) error {
	le := binary.LittleEndian
	exts := extentsOf(fm.runs)
	root := raw[0x28 : 0x28+60]
	type entry struct {
		logical uint64
		ext     run    // depth 0
		child   uint64 // depth > 0
	}
	ents := make([]entry, len(exts))
	for i, e := range exts {
		ents[i] = entry{logical: e.logical, ext: e}
	}
	put := func(node []byte, depth int, es []entry, maxEntries int) {
		le.PutUint16(node[0:], 0xF30A)
		le.PutUint16(node[2:], uint16(len(es)))
		le.PutUint16(node[4:], uint16(maxEntries))
		le.PutUint16(node[6:], uint16(depth))
		le.PutUint32(node[8:], 0)
		for i, e := range es {
			p := node[12+12*i:]
			le.PutUint32(p, uint32(e.logical))
			if depth == 0 {
				n := uint16(e.ext.length)
				if e.ext.unwritten {
					n += 32768
				}
				le.PutUint16(p[4:], n)
				le.PutUint16(p[6:], uint16(e.ext.phys>>32))
				le.PutUint32(p[8:], uint32(e.ext.phys))
			} else {
				le.PutUint32(p[4:], uint32(e.child))
				le.PutUint16(p[8:], uint16(e.child>>32))
				le.PutUint16(p[10:], 0)
			}
		}
	}
	per := int((w.blockSize - 12) / 12)
	depth := 0
	iseed := w.iseed(ino, raw)
	for len(ents) > 4 {
		var up []entry
		for i := 0; i < len(ents); i += per {
			chunk := ents[i:min(len(ents), i+per)]
			blk, err := w.allocTreeBlock(goal)
			if err != nil {
				return err
			}
			fm.tree = append(fm.tree, blk)
			node := make([]byte, w.blockSize)
			put(node, depth, chunk, per)
			if w.m.csum {
				le.PutUint32(node[extentTailOffset(node):], extentBlockCsum(iseed, node))
			}
			if err := w.writeBlock(blk, node); err != nil {
				return err
			}
			up = append(up, entry{logical: chunk[0].logical, child: blk})
		}
		ents = up
		depth++
	}
	clear(root)
	put(root, depth, ents, 4)
	return nil
}

// storeBlockMap writes an ext2/3 block map: 12 direct pointers, then
// single, double and triple indirect blocks (only those that map
// something).
func (w *Writer) storeBlockMap(raw []byte, fm *fileMap, goal uint64) error {
	le := binary.LittleEndian
	per := uint64(w.blockSize / 4)
	ib := raw[0x28 : 0x28+60]
	clear(ib)
	type node struct {
		ptrs     []uint32
		children []*node
	}
	var tops [3]*node
	for _, r := range fm.runs {
		if r.logical+r.length > w.maxBlockMapped() {
			return fmt.Errorf("%w: file too large for an ext2/3 block map", ErrUnsupported)
		}
		for i := uint64(0); i < r.length; i++ {
			l, p := r.logical+i, uint32(r.phys+i)
			if l < 12 {
				le.PutUint32(ib[4*l:], p)
				continue
			}
			l -= 12
			level, span := 1, per
			for l >= span {
				l -= span
				level++
				span *= per
			}
			if tops[level-1] == nil {
				tops[level-1] = &node{}
			}
			n := tops[level-1]
			for lv := level; ; lv-- {
				span /= per
				idx := l / span
				l %= span
				if lv == 1 {
					if n.ptrs == nil {
						n.ptrs = make([]uint32, per)
					}
					n.ptrs[idx] = p
					break
				}
				if n.children == nil {
					n.children = make([]*node, per)
				}
				if n.children[idx] == nil {
					n.children[idx] = &node{}
				}
				n = n.children[idx]
			}
		}
	}
	var write func(n *node) (uint64, error)
	write = func(n *node) (uint64, error) {
		b := make([]byte, w.blockSize)
		if n.ptrs != nil {
			for i, p := range n.ptrs {
				le.PutUint32(b[4*i:], p)
			}
		}
		for i, c := range n.children {
			if c == nil {
				continue
			}
			cb, err := write(c)
			if err != nil {
				return 0, err
			}
			le.PutUint32(b[4*i:], uint32(cb))
		}
		blk, err := w.allocTreeBlock(goal)
		if err != nil {
			return 0, err
		}
		fm.tree = append(fm.tree, blk)
		return blk, w.writeBlock(blk, b)
	}
	for i, t := range tops {
		if t == nil {
			continue
		}
		blk, err := write(t)
		if err != nil {
			return err
		}
		le.PutUint32(ib[4*(12+i):], uint32(blk))
	}
	return nil
}
