package ext4

import (
	"encoding/binary"
	"fmt"
)

// Directory file types (EXT4_FT_*).
const (
	ftRegular = 1
	ftDir     = 2
	ftSymlink = 7
)

// ftypeOf is the directory entry type of an inode mode.
func ftypeOf(mode uint16) uint8 {
	switch mode & sIFMT {
	case sIFREG:
		return ftRegular
	case sIFDIR:
		return ftDir
	case sIFCHR:
		return 3
	case sIFBLK:
		return 4
	case sIFIFO:
		return 5
	case sIFSOCK:
		return 6
	case sIFLNK:
		return ftSymlink
	}
	return 0
}

// dirHandle is a directory being changed: its inode record and map.
type dirHandle struct {
	ino uint32
	raw []byte
	fm  *fileMap
}

func (w *Writer) openDir(ino uint32) (*dirHandle, error) {
	raw, err := w.m.readRawInode(ino)
	if err != nil {
		return nil, err
	}
	if rawMode(raw)&sIFMT != sIFDIR {
		return nil, fmt.Errorf("inode %d: %w", ino, errNotDir)
	}
	if fl := rawFlags(raw); fl&(flagEncrypt|flagCasefold) != 0 {
		return nil, fmt.Errorf("%w: changing an encrypted or case-insensitive directory", ErrUnsupported)
	}
	fm, err := w.loadMap(ino, raw)
	if err != nil {
		return nil, err
	}
	return &dirHandle{ino: ino, raw: raw, fm: fm}, nil
}

const flagCasefold = 0x40000000

// physOf is the device block of logical block l, or 0.
func (fm *fileMap) physOf(l uint64) uint64 {
	for _, r := range fm.runs {
		if l >= r.logical && l < r.logical+r.length && !r.unwritten {
			return r.phys + l - r.logical
		}
	}
	return 0
}

// dirEntry is one record of a directory block.
type dirEntry struct {
	off, recLen, nameLen int
	ino                  uint32
}

func (w *Writer) nameLen(b []byte) int {
	if w.incompat&incompatFiletype == 0 {
		return int(binary.LittleEndian.Uint16(b[6:]))
	}
	return int(b[6])
}

// entries lists the records of a directory block (the checksum tail
// excluded).
func (w *Writer) entries(d *dirHandle, b []byte) ([]dirEntry, error) {
	end := len(b)
	if w.m.csum && hasDirTail(b) {
		end -= dirTailSize
	}
	le := binary.LittleEndian
	out := make([]dirEntry, 0, end/32)
	for p := 0; p < end; {
		if p+8 > end {
			return nil, fmt.Errorf("%w: directory inode %d: entry past the block", ErrCorrupt, d.ino)
		}
		e := dirEntry{off: p, recLen: int(le.Uint16(b[p+4:])), nameLen: w.nameLen(b[p:]), ino: le.Uint32(b[p:])}
		if e.recLen < 8 || e.recLen&3 != 0 || p+e.recLen > end || 8+e.nameLen > e.recLen {
			return nil, fmt.Errorf("%w: directory inode %d: bad entry at offset %d", ErrCorrupt, d.ino, p)
		}
		out = append(out, e)
		p += e.recLen
	}
	return out, nil
}

func entrySize(nameLen int) int { return (8 + nameLen + 3) &^ 3 }

func (w *Writer) putEntry(b []byte, ino uint32, recLen int, name string, ftype uint8) {
	le := binary.LittleEndian
	le.PutUint32(b, ino)
	le.PutUint16(b[4:], uint16(recLen))
	if w.incompat&incompatFiletype == 0 {
		le.PutUint16(b[6:], uint16(len(name)))
	} else {
		b[6], b[7] = uint8(len(name)), ftype
	}
	copy(b[8:], name)
}

// writeDirBlock writes a directory block, with its checksum tail.
func (w *Writer) writeDirBlock(d *dirHandle, blk uint64, b []byte) error {
	if w.m.csum {
		setDirTail(w.iseed(d.ino, d.raw), b)
	}
	return w.writeBlock(blk, b)
}

// The reader's cache of a changed directory is kept up to date rather
// than dropped (rebuilding it after every change made filling a directory
// quadratic). New names go at the end; removed ones stay as entries of
// inode 0, which ReadDir skips.

func (w *Writer) cacheAdd(dir uint32, name string, ino uint32, ftype uint8) {
	if dc, ok := w.dirs[dir]; ok {
		dc.byName[name] = len(dc.ents)
		dc.ents = append(dc.ents, dirent{name: name, ino: ino, ftype: ftype})
	}
}

func (w *Writer) cacheRemove(dir uint32, name string) {
	if dc, ok := w.dirs[dir]; ok {
		if i, ok := dc.byName[name]; ok {
			dc.ents[i].ino = 0
			delete(dc.byName, name)
		}
	}
}

func (w *Writer) cacheSet(dir uint32, name string, ino uint32, ftype uint8) {
	if dc, ok := w.dirs[dir]; ok {
		if i, ok := dc.byName[name]; ok {
			dc.ents[i].ino, dc.ents[i].ftype = ino, ftype
		}
	}
}

// dirBlocks is how many blocks the directory's size covers.
func (w *Writer) dirBlocks(d *dirHandle) uint64 { return uint64(rawSize(d.raw) / w.blockSize) }

// addEntry links name to ino in the directory. An indexed directory is
// first turned into a linear one (the new name would break the hash
// order). When no block has room, the directory grows by one block.
func (w *Writer) addEntry(d *dirHandle, name string, ino uint32, ftype uint8) error {
	if rawFlags(d.raw)&flagIndex != 0 {
		if err := w.dropIndex(d); err != nil {
			return err
		}
	}
	need := entrySize(len(name))
	b := make([]byte, w.blockSize)
	// Blocks before the hint had no room the last time (removals lower
	// it): filling a directory does not rescan it from the start.
	for l := min(w.dirHint[d.ino], w.dirBlocks(d)); l < w.dirBlocks(d); l++ {
		blk := d.fm.physOf(l)
		if blk == 0 {
			continue
		}
		if err := w.readBlock(b, blk); err != nil {
			return err
		}
		ents, err := w.entries(d, b)
		if err != nil {
			return err
		}
		for _, e := range ents {
			used := 0
			if e.ino != 0 {
				used = entrySize(e.nameLen)
			}
			if e.recLen-used < need {
				continue
			}
			if e.ino == 0 {
				w.putEntry(b[e.off:], ino, e.recLen, name, ftype)
			} else {
				binary.LittleEndian.PutUint16(b[e.off+4:], uint16(used))
				w.putEntry(b[e.off+used:], ino, e.recLen-used, name, ftype)
			}
			if err := w.writeDirBlock(d, blk, b); err != nil {
				return err
			}
			w.cacheAdd(d.ino, name, ino, ftype)
			w.dirHint[d.ino] = l
			return nil
		}
	}
	// A new block at the end.
	l := w.dirBlocks(d)
	goal := uint64(0)
	if l > 0 {
		goal = d.fm.physOf(l-1) + 1
	}
	if err := w.reserve(d.fm, rawFlags(d.raw)&flagExtents != 0, 1); err != nil {
		return err
	}
	blk, err := w.a.allocMeta(goal)
	if err != nil {
		return err
	}
	d.fm.runs = merge(d.fm.runs, []run{{logical: l, phys: blk, length: 1}})
	clear(b)
	usable := int(w.blockSize)
	if w.m.csum {
		usable -= dirTailSize
	}
	w.putEntry(b, ino, usable, name, ftype)
	if err := w.writeDirBlock(d, blk, b); err != nil {
		return err
	}
	setRawSize(d.raw, int64(l+1)*w.blockSize)
	if err := w.storeMap(d.ino, d.raw, d.fm); err != nil {
		return err
	}
	w.cacheAdd(d.ino, name, ino, ftype)
	w.dirHint[d.ino] = l
	return w.writeInode(d.ino, d.raw)
}

// reserve fails with ErrNoSpace unless n more data blocks and the tree
// blocks the map would then need are free.
func (w *Writer) reserve(fm *fileMap, extents bool, n uint64) error {
	var last uint64
	if k := len(fm.runs); k > 0 {
		last = fm.runs[k-1].logical + fm.runs[k-1].length
	}
	after := merge(fm.runs, []run{{logical: last + 1, phys: 0, length: n}}) // worst case: not contiguous
	need := n + w.treeBlocksFor(after, extents)
	have := w.a.totalFreeB + uint64(len(fm.tree))
	if need > have {
		return fmt.Errorf("%w: %d blocks needed, %d free", ErrNoSpace, need, have)
	}
	return nil
}

// findEntry locates name in the directory: its block, the entry and the
// one before it in the block (off -1 when it is the first).
func (w *Writer) findEntry(d *dirHandle, name string) (blk uint64, b []byte, e dirEntry, prev int, err error) {
	b = make([]byte, w.blockSize)
	for l := uint64(0); l < w.dirBlocks(d); l++ {
		blk = d.fm.physOf(l)
		if blk == 0 {
			continue
		}
		if err = w.readBlock(b, blk); err != nil {
			return
		}
		var ents []dirEntry
		if ents, err = w.entries(d, b); err != nil {
			return
		}
		prev = -1
		for i, x := range ents {
			if x.ino != 0 && x.nameLen == len(name) && string(b[x.off+8:x.off+8+x.nameLen]) == name {
				if i > 0 {
					prev = ents[i-1].off
				}
				return blk, b, x, prev, nil
			}
		}
	}
	return 0, nil, dirEntry{}, 0, fmt.Errorf("%q: %w", name, errNotExist)
}

// removeEntry unlinks name: its record joins the one before it, or, first
// in its block, becomes unused. An htree stays valid (no hash moves).
func (w *Writer) removeEntry(d *dirHandle, name string) error {
	blk, b, e, prev, err := w.findEntry(d, name)
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	if prev >= 0 {
		le.PutUint16(b[prev+4:], le.Uint16(b[prev+4:])+uint16(e.recLen))
		clear(b[e.off : e.off+e.recLen])
	} else {
		le.PutUint32(b[e.off:], 0)
		clear(b[e.off+6 : e.off+e.recLen])
	}
	if err := w.writeDirBlock(d, blk, b); err != nil {
		return err
	}
	w.cacheRemove(d.ino, name)
	delete(w.dirHint, d.ino) // room again somewhere: scan from the start
	return nil
}

// setEntryIno points an existing name at another inode (rename over it).
func (w *Writer) setEntryIno(d *dirHandle, name string, ino uint32, ftype uint8) error {
	blk, b, e, _, err := w.findEntry(d, name)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(b[e.off:], ino)
	if w.incompat&incompatFiletype != 0 {
		b[e.off+7] = ftype
	}
	if err := w.writeDirBlock(d, blk, b); err != nil {
		return err
	}
	w.cacheSet(d.ino, name, ino, ftype)
	return nil
}

// setDotDot points the directory's ".." at parent.
func (w *Writer) setDotDot(d *dirHandle, parent uint32) error {
	blk := d.fm.physOf(0)
	if blk == 0 {
		return fmt.Errorf("%w: directory inode %d has no first block", ErrCorrupt, d.ino)
	}
	b := make([]byte, w.blockSize)
	if err := w.readBlock(b, blk); err != nil {
		return err
	}
	le := binary.LittleEndian
	dot := int(le.Uint16(b[4:]))
	if dot < 12 || dot+12 > len(b) || w.nameLen(b[dot:]) != 2 || string(b[dot+8:dot+10]) != ".." {
		return fmt.Errorf("%w: directory inode %d: no '..' entry", ErrCorrupt, d.ino)
	}
	le.PutUint32(b[dot:], parent)
	if rawFlags(d.raw)&flagIndex != 0 {
		// The root block of an htree has no leaf tail; its checksum is
		// the dx one.
		if err := w.setDxCsum(d, b, true); err != nil {
			return err
		}
		return w.writeBlock(blk, b)
	}
	return w.writeDirBlock(d, blk, b)
}

func (w *Writer) setDxCsum(d *dirHandle, b []byte, root bool) error {
	if !w.m.csum {
		return nil
	}
	off, ok := dxCountOffset(b, root)
	if !ok {
		return fmt.Errorf("%w: directory inode %d: bad htree node", ErrCorrupt, d.ino)
	}
	c, at, ok := dxCsum(w.iseed(d.ino, d.raw), b, off)
	if !ok {
		return fmt.Errorf("%w: directory inode %d: bad htree counts", ErrCorrupt, d.ino)
	}
	binary.LittleEndian.PutUint32(b[at:], c)
	return nil
}

// dropIndex turns an htree directory into a linear one, as libext2fs does
// when it cannot keep the index: the root and interior index blocks become
// empty directory blocks (the root keeps "." and ".."), the leaves stay
// as they are, and the index flag is cleared.
func (w *Writer) dropIndex(d *dirHandle) error {
	le := binary.LittleEndian
	b := make([]byte, w.blockSize)
	rootBlk := d.fm.physOf(0)
	if err := w.readBlock(b, rootBlk); err != nil {
		return err
	}
	levels := int(b[0x1E])
	if levels > 3 {
		return fmt.Errorf("%w: directory inode %d: htree of %d levels", ErrCorrupt, d.ino, levels)
	}
	// Interior nodes, level by level from the root's entries.
	off, ok := dxCountOffset(b, true)
	if !ok {
		return fmt.Errorf("%w: directory inode %d: bad htree root", ErrCorrupt, d.ino)
	}
	children := func(node []byte, countOff int) []uint64 {
		n := int(le.Uint16(node[countOff+2:]))
		var out []uint64
		for i := 0; i < n && countOff+8*i+8 <= len(node); i++ {
			out = append(out, uint64(le.Uint32(node[countOff+8*i+4:]))&0x0FFFFFFF)
		}
		return out
	}
	level := children(b, off)
	var interior []uint64
	nb := make([]byte, w.blockSize)
	for lv := 0; lv < levels; lv++ {
		var next []uint64
		for _, l := range level {
			blk := d.fm.physOf(l)
			if blk == 0 {
				return fmt.Errorf("%w: directory inode %d: htree points at hole %d", ErrCorrupt, d.ino, l)
			}
			if err := w.readBlock(nb, blk); err != nil {
				return err
			}
			o, ok := dxCountOffset(nb, false)
			if !ok {
				return fmt.Errorf("%w: directory inode %d: bad htree node %d", ErrCorrupt, d.ino, l)
			}
			interior = append(interior, blk)
			next = append(next, children(nb, o)...)
		}
		level = next
	}
	usable := int(w.blockSize)
	if w.m.csum {
		usable -= dirTailSize
	}
	setRawFlags(d.raw, rawFlags(d.raw)&^flagIndex)
	delete(w.dirHint, d.ino) // the index blocks become room for names
	for _, blk := range interior {
		clear(nb)
		w.putEntry(nb, 0, usable, "", 0)
		if err := w.writeDirBlock(d, blk, nb); err != nil {
			return err
		}
	}
	dotLen := int(le.Uint16(b[4:]))
	clear(b[dotLen+8+2:])
	le.PutUint16(b[dotLen+4:], uint16(usable-dotLen))
	if err := w.writeDirBlock(d, rootBlk, b); err != nil {
		return err
	}
	return w.writeInode(d.ino, d.raw)
}

// isEmptyDir reports whether a directory holds only "." and "..".
func (w *Writer) isEmptyDir(d *dirHandle) (bool, error) {
	b := make([]byte, w.blockSize)
	for l := uint64(0); l < w.dirBlocks(d); l++ {
		blk := d.fm.physOf(l)
		if blk == 0 {
			continue
		}
		if err := w.readBlock(b, blk); err != nil {
			return false, err
		}
		ents, err := w.entries(d, b)
		if err != nil {
			return false, err
		}
		for _, e := range ents {
			if e.ino == 0 {
				continue
			}
			name := string(b[e.off+8 : e.off+8+e.nameLen])
			if name != "." && name != ".." {
				return false, nil
			}
		}
	}
	return true, nil
}
