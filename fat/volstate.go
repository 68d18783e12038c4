package fat

import (
	"fmt"
)

// The volume's state flags say two things to whoever opens it next:
//
//   - dirty: a session was writing and did not end cleanly, so an
//     operation may have stopped half-way. FAT16 and FAT32 keep this in
//     FAT[1]'s clean-shutdown bit (Microsoft's FAT specification; Windows
//     and fsck.fat read it); FAT12 has no such bit and uses bit 0 of the
//     boot sector's state byte (0x25), which Linux sets while a volume is
//     mounted and fsck.fat also reads. A volume whose boot sector has that
//     bit set (by Linux) counts as dirty whatever its type.
//   - needs repair: a walk of the tree found cross-linked files. FAT16 and
//     FAT32 keep this in FAT[1]'s hard-error bit, FAT12 in bit 1 of the
//     state byte (Windows NT's "surface test" bit, which Linux and
//     fsck.fat ignore). While it is set every change but Check(true) is
//     refused: this is how a known cross-link stays known cheaply.
const (
	bootStateDirty  = 0x01
	bootStateErrors = 0x02
)

// errUnrecovered refuses changes to a dirty volume opened without recovery.
var errUnrecovered = fmt.Errorf("%w: the volume was not closed cleanly and has not been recovered (Check(true) does it)", ErrCorrupt)

// readState reads the flags at Open.
func (fs *FS) readState(boot []byte) {
	g := fs.g
	if clean, noErr := fs.fat.stateBits(); clean != 0 {
		fs.dirtyOnDisk = !fs.fat.flag(clean)
		fs.markedBad = !fs.fat.flag(noErr)
	}
	if off := g.stateOff; off != 0 && off < len(boot) {
		if boot[off]&bootStateDirty != 0 {
			fs.dirtyOnDisk, fs.bootDirty = true, true
		}
		if g.typ == FAT12 && boot[off]&bootStateErrors != 0 {
			fs.markedBad = true
		}
	}
	fs.noStateFlag = g.typ == FAT12 && g.stateOff == 0
	fs.unrecovered = fs.dirtyOnDisk
}

// startSession decides, at Open of a writable volume, whether it must be
// recovered first and whether changes are allowed at all.
func (fs *FS) startSession(noRecovery bool) error {
	switch {
	case fs.unrecovered && noRecovery:
		fs.needsRepair = errUnrecovered
		return nil
	case fs.unrecovered || fs.noStateFlag:
		// A volume that cannot say whether it is dirty (FAT12 without an
		// extended boot sector, all of them tiny) is recovered every time.
		rep, err := fs.check(repairInterrupted)
		switch {
		case err != nil && (fs.err != nil || fs.root == nil):
			return fmt.Errorf("fat: recovering after an interrupted session: %w", err)
		case err != nil:
			// Not a failed write: the volume is worse than a crash leaves
			// it. It stays readable; changes wait for Check(true).
			fs.needsRepair = fmt.Errorf("%w (recovering the interrupted session failed: %v)", ErrNeedsRepair, err)
			return nil
		}
		if len(rep.Repaired) > 0 {
			fs.recovery = rep
		}
	}
	if fs.needsRepair != nil {
		return nil
	}
	switch {
	case fs.markedBad:
		fs.needsRepair = fmt.Errorf("%w (the volume's needs-repair flag is set: a check found cross-links, or another system disk errors)", ErrNeedsRepair)
	case fs.fat.merged != 0 && !fs.verified:
		fs.needsRepair = fmt.Errorf("%w (two chains run into cluster %d)", ErrNeedsRepair, fs.fat.merged)
	}
	return nil
}

// Recovery returns what the recovery of an interrupted session did when
// this FS was opened (nil if there was nothing to do): a CheckReport whose
// Repaired lists each change. A writable Open of a volume that was not
// closed cleanly completes or undoes what its last session left half-way
// (see doc.go, "Crash safety"), so the next ordinary operation finds no
// cross-links and no lost file.
func (fs *FS) Recovery() *CheckReport {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.recovery
}

// Dirty reports whether the volume was not closed cleanly (an operation
// was interrupted) and has not been recovered: what a read-only FS sees of
// such a volume (a writable Open recovers it, see Recovery).
func (fs *FS) Dirty() bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.unrecovered
}

// NeedsRepair returns the error changes are refused with (wrapping
// ErrNeedsRepair or ErrCorrupt), or nil when changes are allowed.
func (fs *FS) NeedsRepair() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.needsRepair
}

// markVolumeDirty sets the dirty flag on disk, before the first write of a
// session (writeAt calls it).
func (fs *FS) markVolumeDirty() error {
	fs.dirtyOnDisk = true
	if clean, _ := fs.fat.stateBits(); clean != 0 {
		fs.fat.setFlag(clean, false)
		return fs.writeFAT1()
	}
	if fs.g.stateOff != 0 {
		return fs.writeBootState(bootStateDirty, true)
	}
	return nil
}

// markVolumeClean clears the dirty flag once everything is on disk and
// consistent: at Close, at Sync with no file open, after a repair.
func (fs *FS) markVolumeClean() error {
	if fs.w == nil || fs.err != nil || fs.unrecovered || !fs.dirtyOnDisk {
		return nil
	}
	// Everything else on the disk first: a disk may persist the writes
	// between two flushes in any order, and a flag that said clean over
	// a rename still half-way would keep the next Open from completing
	// it (exFAT's markClean does the same).
	if err := fs.barrier(); err != nil {
		return err
	}
	if clean, _ := fs.fat.stateBits(); clean != 0 {
		fs.fat.setFlag(clean, true)
		if err := fs.writeFAT1(); err != nil {
			return err
		}
	}
	if fs.bootDirty || fs.g.typ == FAT12 && fs.g.stateOff != 0 {
		if err := fs.writeBootState(bootStateDirty, false); err != nil {
			return err
		}
		fs.bootDirty = false
	}
	fs.dirtyOnDisk = false
	return nil
}

// setNeedsRepair refuses further changes and records why on disk, so that
// later sessions refuse them too without walking the tree.
func (fs *FS) setNeedsRepair() error {
	fs.verified = false
	fs.needsRepair = ErrNeedsRepair
	if fs.markedBad || fs.canWrite() != nil {
		return nil
	}
	fs.markedBad = true
	if _, noErr := fs.fat.stateBits(); noErr != 0 {
		fs.fat.setFlag(noErr, false)
		return fs.writeFAT1()
	}
	if fs.g.stateOff != 0 {
		return fs.writeBootState(bootStateErrors, true)
	}
	return nil
}

// clearNeedsRepair lifts the refusal after a successful repair.
func (fs *FS) clearNeedsRepair() error {
	fs.needsRepair = nil
	if !fs.markedBad {
		return nil
	}
	fs.markedBad = false
	if _, noErr := fs.fat.stateBits(); noErr != 0 {
		fs.fat.setFlag(noErr, true)
		return fs.writeFAT1()
	}
	if fs.g.stateOff != 0 {
		return fs.writeBootState(bootStateErrors, false)
	}
	return nil
}

// writeFAT1 writes FAT[1] as it is in memory to every FAT copy. It patches
// the first FAT sector as it is on disk rather than writing the one in
// memory, which may hold allocations that must not reach the disk before
// the data they are for.
func (fs *FS) writeFAT1() error {
	g := fs.g
	ss := g.bytesPerSector
	b := make([]byte, ss)
	copies := fs.fatCopies()
	if err := fs.readAt(b, copies[0]); err != nil {
		return err
	}
	n := 2
	if g.typ == FAT32 {
		n = 4
	}
	copy(b[n:2*n], fs.fat.raw[n:2*n])
	for _, off := range copies {
		if err := fs.writeAt(b, off); err != nil {
			return err
		}
	}
	return nil
}

// writeBootState sets or clears bits of the boot sector's state byte (and
// of the FAT32 backup boot sector's, where they are set too, so the two
// stay equal).
func (fs *FS) writeBootState(bits byte, on bool) error {
	g := fs.g
	ss := g.bytesPerSector
	sectors := []int64{0}
	if g.typ == FAT32 && g.backupBoot > 0 && g.backupBoot < g.reservedSectors {
		sectors = append(sectors, int64(g.backupBoot))
	}
	for i, s := range sectors {
		b := make([]byte, ss)
		if err := fs.readAt(b, s*int64(ss)); err != nil {
			return err
		}
		v := b[g.stateOff]
		nv := v &^ bits
		if on {
			nv = v | bits
		}
		if nv == v {
			continue
		}
		if i > 0 && on {
			continue // the backup is left alone when setting (Linux does the same)
		}
		b[g.stateOff] = nv
		if err := fs.writeAt(b, s*int64(ss)); err != nil {
			return err
		}
	}
	return nil
}

// ensureUnshared makes sure, once per session, that no cluster is claimed
// by two files or directories before anything is freed: freeing a shared
// cluster would hand another file's data to the next allocation. It walks
// the whole tree (reading every directory); if it finds a cross-link the
// volume is marked as needing repair and the change refused.
func (fs *FS) ensureUnshared() error {
	if fs.verified || fs.repairing {
		return nil
	}
	if fs.needsRepair != nil {
		return fs.needsRepair
	}
	if err := fs.sync(); err != nil {
		return err
	}
	c := newChecker(fs, fs.fat)
	c.quick = true
	if err := c.run(); err != nil {
		return err
	}
	shared := ""
	if len(c.cross) > 0 {
		shared = c.r.CrossLinks[0]
	}
	for _, rs := range c.renames {
		if rs.twin >= 0 {
			shared = c.r.Interrupted[0]
		}
	}
	if shared == "" {
		fs.verified = true
		return nil
	}
	if err := fs.setNeedsRepair(); err != nil {
		return err
	}
	fs.needsRepair = fmt.Errorf("%w (%s)", ErrNeedsRepair, shared)
	return fs.needsRepair
}

// freeChain frees the chain at c, unless changes are refused because of
// cross-links, in which case the clusters are left allocated (lost, for
// Check to reclaim): never free what may be someone else's.
func (fs *FS) freeChain(c uint32) {
	if fs.needsRepair != nil && !fs.repairing {
		return
	}
	fs.fat.releaseChain(c)
}
