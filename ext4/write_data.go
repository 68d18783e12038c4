package ext4

import (
	"encoding/binary"
	"fmt"
)

// writeData writes p at byte off of the file whose record is raw and map
// fm: blocks already written are overwritten in place, unwritten extents
// become written, holes get new blocks (contiguous after the block before
// them when free). Space for the new blocks and the tree is taken before
// any byte is written; when it is short, nothing changes (ErrNoSpace).
// The caller writes the inode and flushes.
func (w *Writer) writeData(ino uint32, raw []byte, fm *fileMap, p []byte, off int64) error {
	if len(p) == 0 {
		return nil
	}
	bs := w.blockSize
	first := uint64(off / bs)
	end := uint64((off + int64(len(p)) + bs - 1) / bs)
	extents := rawFlags(raw)&flagExtents != 0
	if extents && end > 1<<32 || !extents && end > w.maxBlockMapped() {
		return fmt.Errorf("%w: offset %d past the largest file", errTooLarge, off+int64(len(p)))
	}
	kept, old := punch(fm.runs, first, end)
	// New blocks for the holes of [first, end).
	var fresh []run
	rollback := func() {
		for _, r := range fresh {
			w.a.freeBlocks(r.phys, r.length)
		}
	}
	next := first
	gaps := func(upTo uint64) error {
		for next < upTo {
			goal := w.goalFor(ino, fm, next)
			blk, n, err := w.a.allocBlocks(goal, upTo-next)
			if err != nil {
				return err
			}
			fresh = append(fresh, run{logical: next, phys: blk, length: n})
			next += n
		}
		return nil
	}
	need := uint64(0)
	{
		at := first
		for _, r := range old {
			need += r.logical - at
			at = r.logical + r.length
		}
		need += end - at
	}
	if need > w.a.usable() && need <= w.a.totalFreeB {
		// Blocks freed since the last commit become usable with it
		// (nothing of this write is pending yet).
		if err := w.commit(); err != nil {
			return err
		}
	}
	if need > w.a.usable() {
		return fmt.Errorf("%w: %d blocks needed, %d free", ErrNoSpace, need, w.a.usable())
	}
	for _, r := range old {
		if err := gaps(r.logical); err != nil {
			rollback()
			return err
		}
		next = r.logical + r.length
	}
	if err := gaps(end); err != nil {
		rollback()
		return err
	}
	var written []run
	for _, r := range old {
		r2 := r
		r2.unwritten = false
		written = append(written, r2)
	}
	newRuns := merge(kept, append(written, fresh...))
	changed := len(fresh) > 0
	for _, r := range old {
		changed = changed || r.unwritten
	}
	if changed {
		if t := w.treeBlocksFor(newRuns, extents); t > w.a.totalFreeB+uint64(len(fm.tree)) {
			rollback()
			return fmt.Errorf("%w: the block map needs %d blocks, %d free", ErrNoSpace, t, w.a.totalFreeB)
		}
	}
	// The data, one run at a time; partial blocks keep the bytes of a
	// written block and are zeros elsewhere.
	wasWritten := map[uint64]bool{}
	for _, r := range old {
		if !r.unwritten {
			for i := uint64(0); i < r.length; i++ {
				if l := r.logical + i; l == first || l == end-1 {
					wasWritten[l] = true
				}
			}
		}
	}
	for _, r := range merge(nil, append(written, fresh...)) {
		segStart := int64(r.logical) * bs
		segEnd := int64(r.logical+r.length) * bs
		lo, hi := max(off, segStart), min(off+int64(len(p)), segEnd)
		// Head and tail partial blocks.
		for _, l := range []uint64{uint64(lo / bs), uint64((hi - 1) / bs)} {
			bStart := int64(l) * bs
			if lo > bStart || hi < bStart+bs {
				b := make([]byte, bs)
				phys := r.phys + l - r.logical
				if wasWritten[l] {
					if err := w.readBlock(b, phys); err != nil {
						return err
					}
				}
				s, e := max(lo, bStart), min(hi, bStart+bs)
				copy(b[s-bStart:], p[s-off:e-off])
				if err := w.dataWriteAt(b, int64(phys)*bs); err != nil {
					return err
				}
			}
		}
		// Whole blocks straight from p.
		fs := (lo + bs - 1) / bs * bs
		fe := hi / bs * bs
		if fe > fs {
			phys := int64(r.phys) + fs/bs - int64(r.logical)
			if err := w.dataWriteAt(p[fs-off:fe-off], phys*bs); err != nil {
				return err
			}
			w.wroteData(phys*bs, fe-fs)
		}
	}
	if !changed {
		return nil
	}
	fm.runs = newRuns
	return w.storeMap(ino, raw, fm)
}

var errTooLarge = fmt.Errorf("%w: file too large", ErrUnsupported)

// goalFor is where a new block for logical block l of the file should
// go: after the block before it, else after the file's last block, else
// in the inode's group.
func (w *Writer) goalFor(ino uint32, fm *fileMap, l uint64) uint64 {
	for i := len(fm.runs) - 1; i >= 0; i-- {
		r := fm.runs[i]
		if r.logical < l {
			if l < r.logical+r.length {
				return r.phys + l - r.logical
			}
			return r.phys + r.length
		}
	}
	if len(fm.runs) > 0 {
		return fm.runs[len(fm.runs)-1].phys + fm.runs[len(fm.runs)-1].length
	}
	return w.m.groupFirstBlock((ino - 1) / w.inodesPerGroup)
}

// truncate sets the file's size: blocks past it are freed, the bytes of
// the last block past it zeroed (so a later extension reads zeros).
func (w *Writer) truncate(ino uint32, raw []byte, fm *fileMap, size int64) error {
	bs := w.blockSize
	keepBlocks := uint64((size + bs - 1) / bs)
	kept, removed := punch(fm.runs, keepBlocks, 1<<62)
	if size%bs != 0 && size < rawSize(raw) {
		l := uint64(size / bs)
		for _, r := range kept {
			if l >= r.logical && l < r.logical+r.length && !r.unwritten {
				b := make([]byte, bs)
				phys := r.phys + l - r.logical
				if err := w.readBlock(b, phys); err != nil {
					return err
				}
				clear(b[size%bs:])
				if err := w.dataWriteAt(b, int64(phys)*bs); err != nil {
					return err
				}
			}
		}
	}
	if len(removed) > 0 {
		for _, r := range removed {
			if err := w.a.freeBlocks(r.phys, r.length); err != nil {
				return err
			}
		}
		fm.runs = kept
		if err := w.storeMap(ino, raw, fm); err != nil {
			return err
		}
	}
	w.setSize(raw, size)
	return nil
}

// setSize stores a regular file's size, turning large_file on when a
// file passes 2 GiB.
func (w *Writer) setSize(raw []byte, size int64) {
	setRawSize(raw, size)
	if size > 1<<31-1 && w.roCompat&roCompatLargeFile == 0 {
		w.roCompat |= roCompatLargeFile
		binary.LittleEndian.PutUint32(w.m.sb[0x64:], w.roCompat)
		w.a.dirty[0] = true
	}
}

// releaseInode frees everything inode ino holds (data, tree, xattr
// block) and the inode itself.
func (w *Writer) releaseInode(ino uint32, raw []byte) error {
	fm, err := w.loadMap(ino, raw)
	if err != nil {
		return err
	}
	for _, r := range fm.runs {
		if err := w.a.freeBlocks(r.phys, r.length); err != nil {
			return err
		}
	}
	for _, b := range fm.tree {
		if err := w.a.freeBlocks(b, 1); err != nil {
			return err
		}
	}
	if acl := rawFileACL(raw); acl != 0 {
		if err := w.dropXattrBlock(acl); err != nil {
			return err
		}
	}
	isDir := rawMode(raw)&sIFMT == sIFDIR
	gen := binary.LittleEndian.Uint32(raw[inoGeneration:])
	extra := uint16(0)
	if len(raw) > 128 {
		extra = binary.LittleEndian.Uint16(raw[inoExtraIsize:])
	}
	clear(raw)
	binary.LittleEndian.PutUint32(raw[inoGeneration:], gen)
	if len(raw) > 128 {
		binary.LittleEndian.PutUint16(raw[inoExtraIsize:], extra)
	}
	binary.LittleEndian.PutUint32(raw[0x14:], uint32(w.opTime.Unix())) // i_dtime
	if err := w.writeInode(ino, raw); err != nil {
		return err
	}
	delete(w.dirs, ino)
	delete(w.dirHint, ino)
	return w.a.freeInode(ino, isDir)
}

// dropXattrBlock releases one reference to a shared xattr block.
func (w *Writer) dropXattrBlock(blk uint64) error {
	b := make([]byte, w.blockSize)
	if err := w.readBlock(b, blk); err != nil {
		return err
	}
	le := binary.LittleEndian
	if le.Uint32(b) != 0xEA020000 {
		return fmt.Errorf("%w: xattr block %d has a bad magic", ErrCorrupt, blk)
	}
	refs := le.Uint32(b[4:])
	if refs <= 1 {
		return w.a.freeBlocks(blk, 1)
	}
	le.PutUint32(b[4:], refs-1)
	if w.m.csum {
		le.PutUint32(b[0x10:], xattrBlockCsum(w.m.seed, blk, b))
	}
	return w.writeBlock(blk, b)
}
