package exfat

// recoverInterrupted completes what the last session left half-way, at a
// writable Open of a volume whose VolumeDirty flag is set (a kill or a
// power cut during a change). A rename writes the new entry set before it
// erases the old one, so an interrupted one leaves two names of the same
// clusters; removing the later of them (in walk order) leaves the rename
// done or not done, either of which a rename cut short may leave, and
// loses nothing. Lost clusters (allocated, no entry yet) are freed, and
// the flag is cleared. Anything a crash of this package cannot leave
// (cross-links between different files, damaged entries, wrong
// checksums, a damaged boot region) is left for Check(true) to report and
// repair: the volume is written all the same, as the kernel's driver does
// (with ensureUnshared's guard against freeing a shared cluster).
func (fs *FS) recoverInterrupted() error {
	r, err := fs.check(false)
	if err != nil {
		return err
	}
	if len(r.CrossLinks) > 0 || len(r.BadEntries) > 0 || len(r.BadChecksums) > 0 || len(r.BootProblems) > 0 {
		return nil
	}
	rep, err := fs.check(true)
	if err != nil {
		return err
	}
	if len(rep.Repaired) > 0 {
		fs.recovery = rep
	}
	return nil
}

// Recovery is what the recovery at a writable Open did (nil when the
// volume was clean, or nothing was done).
func (fs *FS) Recovery() *CheckReport { return fs.recovery }

// NeedsRepair is non-nil (wrapping ErrNeedsRepair) once a change found
// clusters shared by two entries: changes that free clusters are then
// refused until Check(true).
func (fs *FS) NeedsRepair() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.needsRepair
}
