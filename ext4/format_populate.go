package ext4

import (
	"encoding/binary"
	"time"
)

// populate makes what mke2fs puts in a new filesystem: the reserved
// inodes, the root directory, lost+found (16 KiB, at most 12 blocks), the
// resize inode over the reserved descriptor blocks and the journal.
func (w *Writer) populate(g formatGeometry, now time.Time) error {
	w.Now = func() time.Time { return now }
	w.lock()
	defer w.mu.Unlock()
	le := binary.LittleEndian
	// Inodes 1 to 10 are reserved: in use, zero (inode 1, the bad block
	// list, with its times).
	for i := uint64(0); i < 10; i++ {
		w.a.inodes[0][i/8] |= 1 << (i % 8)
	}
	w.a.freeI[0] -= 10
	w.a.totalFreeI -= 10
	w.a.dirty[0] = true
	for _, ino := range []uint32{1, 3, 4, 5, 6, 9, 10} {
		raw := make([]byte, w.inodeSize)
		if ino == 1 {
			for _, off := range []int{0x8, 0xC, 0x10} {
				le.PutUint32(raw[off:], uint32(now.Unix()))
			}
		}
		if err := w.writeInode(ino, raw); err != nil {
			return err
		}
	}
	// The root directory.
	root := w.newInode(sIFDIR|0o755, 0, 0, 2)
	blk, err := w.a.allocMeta(w.m.groupFirstBlock(0))
	if err != nil {
		return err
	}
	fm := &fileMap{runs: []run{{logical: 0, phys: blk, length: 1}}}
	setRawSize(root, w.blockSize)
	if err := w.storeMap(rootIno, root, fm); err != nil {
		return err
	}
	d := &dirHandle{ino: rootIno, raw: root, fm: fm}
	b := make([]byte, w.blockSize)
	usable := int(w.blockSize) - dirTailSize
	w.putEntry(b, rootIno, 12, ".", ftDir)
	w.putEntry(b[12:], rootIno, usable-12, "..", ftDir)
	if err := w.writeDirBlock(d, blk, b); err != nil {
		return err
	}
	if err := w.writeInode(rootIno, root); err != nil {
		return err
	}
	w.m.setUsedDirs(0, 1)
	// lost+found.
	if err := w.mkdir(d, "lost+found"); err != nil {
		return err
	}
	lpf, err := w.openDir(11)
	if err != nil {
		return err
	}
	le.PutUint16(lpf.raw, sIFDIR|0o700)
	size := int64(0)
	for i := 1; i < 12; i++ {
		if size += w.blockSize; size >= 16*1024 && size >= 2*w.blockSize {
			break
		}
		if err := w.growDir(lpf); err != nil {
			return err
		}
	}
	if err := w.writeInode(11, lpf.raw); err != nil {
		return err
	}
	if g.rsvGdt > 0 {
		if err := w.makeResizeInode(g, now); err != nil {
			return err
		}
	}
	if g.journal > 0 {
		if err := w.makeJournal(g, now); err != nil {
			return err
		}
	}
	return w.flush()
}

// growDir adds an empty block at the end of a directory.
func (w *Writer) growDir(d *dirHandle) error {
	l := w.dirBlocks(d)
	blk, err := w.a.allocMeta(d.fm.physOf(l-1) + 1)
	if err != nil {
		return err
	}
	d.fm.runs = merge(d.fm.runs, []run{{logical: l, phys: blk, length: 1}})
	b := make([]byte, w.blockSize)
	usable := int(w.blockSize)
	if w.m.csum {
		usable -= dirTailSize
	}
	w.putEntry(b, 0, usable, "", 0)
	if err := w.writeDirBlock(d, blk, b); err != nil {
		return err
	}
	setRawSize(d.raw, int64(l+1)*w.blockSize)
	return w.storeMap(d.ino, d.raw, d.fm)
}

// makeResizeInode builds inode 7, through which resize2fs finds the
// reserved descriptor blocks: its double indirect block lists the primary
// reserved blocks, and each of those, as an indirect block, lists its
// copies in the backup groups.
func (w *Writer) makeResizeInode(g formatGeometry, now time.Time) error {
	le := binary.LittleEndian
	apb := g.bs / 4
	dind, err := w.a.allocMeta(w.m.groupFirstBlock(0))
	if err != nil {
		return err
	}
	db := make([]byte, g.bs)
	backups := 0
	for i := uint64(1); i < g.groups; i++ {
		if hasBackupGroup(i) {
			backups++
		}
	}
	for k := uint64(0); k < g.rsvGdt; k++ {
		primary := g.first + 1 + g.gdtBlocks + k
		le.PutUint32(db[4*((g.gdtBlocks+k)%apb):], uint32(primary))
		ib := make([]byte, g.bs)
		n := 0
		for i := uint64(1); i < g.groups; i++ {
			if hasBackupGroup(i) {
				le.PutUint32(ib[4*n:], uint32(primary+i*g.bpg))
				n++
			}
		}
		if err := w.writeBlock(primary, ib); err != nil {
			return err
		}
	}
	if err := w.writeBlock(dind, db); err != nil {
		return err
	}
	raw := w.newInode(sIFREG|0o600, 0, 0, 1)
	setRawFlags(raw, 0)
	clear(raw[0x28 : 0x28+60])
	le.PutUint32(raw[0x28+4*13:], uint32(dind))
	setRawSize(raw, int64((apb*apb+apb+12)*g.bs))
	units := (1 + g.rsvGdt*uint64(1+backups)) * (g.bs / 512)
	le.PutUint32(raw[0x1C:], uint32(units))
	le.PutUint16(raw[0x74:], uint16(units>>32))
	le.PutUint32(raw[inoGeneration:], 0)
	return w.writeInode(7, raw)
}

// makeJournal builds inode 8: a contiguous, zeroed journal in the middle
// of the filesystem (at a flex group boundary), with an empty journal
// superblock, and records it in the superblock (with the backup of its
// block map mke2fs keeps there).
func (w *Writer) makeJournal(g formatGeometry, now time.Time) error {
	le := binary.LittleEndian
	group := ((g.blocks - g.first) / 2) / g.bpg
	if flex := uint64(1) << formatFlexLog; g.groups > flex {
		group &^= flex - 1
	}
	fm := &fileMap{}
	goal := w.m.groupFirstBlock(uint32(group))
	for have := uint64(0); have < g.journal; {
		start, n, err := w.a.allocBlocks(goal, g.journal-have)
		if err != nil {
			return err
		}
		fm.runs = merge(fm.runs, []run{{logical: have, phys: start, length: n}})
		have += n
		goal = start + n
	}
	zero := make([]byte, 256*g.bs)
	for _, r := range fm.runs {
		for k := uint64(0); k < r.length; k += 256 {
			n := min(256, r.length-k)
			if err := w.dataWriteAt(zero[:n*g.bs], int64((r.phys+k)*g.bs)); err != nil {
				return err
			}
		}
	}
	jsb := make([]byte, g.bs)
	be.PutUint32(jsb, jbdMagic)
	be.PutUint32(jsb[4:], jbdSuperV2)
	be.PutUint32(jsb[0xC:], uint32(g.bs))
	be.PutUint32(jsb[0x10:], uint32(g.journal))
	be.PutUint32(jsb[0x14:], 1)
	be.PutUint32(jsb[0x18:], 1)
	copy(jsb[0x30:], w.m.sb[0x68:0x78])
	be.PutUint32(jsb[0x40:], 1)
	copy(jsb[0x100:], w.m.sb[0x68:0x78])
	if err := w.dataWriteAt(jsb, int64(fm.runs[0].phys*g.bs)); err != nil {
		return err
	}
	raw := w.newInode(sIFREG|0o600, 0, 0, 1)
	setRawSize(raw, int64(g.journal*g.bs))
	if err := w.storeMap(8, raw, fm); err != nil {
		return err
	}
	le.PutUint32(raw[inoGeneration:], 0)
	if err := w.writeInode(8, raw); err != nil {
		return err
	}
	sb := w.m.sb
	le.PutUint32(sb[0xE0:], 8)
	sb[0xFD] = 1 // the journal's block map is backed up in s_jnl_blocks
	copy(sb[0x10C:0x10C+60], raw[0x28:0x28+60])
	le.PutUint32(sb[0x10C+60:], uint32(uint64(rawSize(raw))>>32))
	le.PutUint32(sb[0x10C+64:], uint32(rawSize(raw)))
	return nil
}

// finishFormat sets what mke2fs leaves on new groups (uninitialised
// bitmaps where they can be computed, the unused inode counts), turns the
// journal on and writes the backup superblocks and descriptor tables.
func (w *Writer) finishFormat(g formatGeometry) error {
	w.lock()
	le := binary.LittleEndian
	m := w.m
	for i := uint32(0); i < uint32(g.groups); i++ {
		fl := uint16(bgInodeZeroed)
		used := uint64(0)
		for k := uint64(0); k < g.ipg; k++ {
			if w.a.inodes[i][k/8]&(1<<(k%8)) != 0 {
				used = k + 1
			}
		}
		if used == 0 {
			fl |= bgInodeUninit
		}
		m.setItableUnused(i, g.ipg-used)
		if uint64(i) != g.groups-1 && string(m.uninitBlockBitmap(i)) == string(w.a.blocks[i]) {
			fl |= bgBlockUninit
		}
		m.setFlags(i, fl)
		w.a.dirty[i] = true
	}
	if g.journal > 0 {
		le.PutUint32(m.sb[0x5C:], le.Uint32(m.sb[0x5C:])|compatHasJournal)
	}
	err := w.a.flush(w)
	if err == nil {
		err = w.commit()
	}
	w.mu.Unlock()
	if err != nil {
		return err
	}
	// Backups: the superblock (with its group number) and the
	// descriptors in every group sparse_super keeps them in.
	gdt := make([]byte, g.gdtBlocks*g.bs)
	copy(gdt, m.gdt)
	for i := uint64(1); i < g.groups; i++ {
		if !hasBackupGroup(i) {
			continue
		}
		sb := append([]byte(nil), m.sb...)
		le.PutUint16(sb[0x5A:], uint16(i))
		le.PutUint32(sb[sbChecksum:], superblockCsum(sb))
		at := int64(m.groupFirstBlock(uint32(i)) * g.bs)
		if err := w.dataWriteAt(sb, at); err != nil {
			return err
		}
		if err := w.dataWriteAt(gdt, at+int64(g.bs)); err != nil {
			return err
		}
	}
	return w.syncDev()
}
