package fat

import "github.com/cryptvol/cryptvol/internal/fatcore"

// MakeRoom makes directory dir ready for new entries of the given names
// in one step: a missing dir (whose parent exists) is made, as Mkdir
// makes it, with room for them; an existing one grows once if its free
// slots are too few. A directory that fills as its entries come grows
// several times, a barrier each (a put of 1,000 files into a new
// directory, which holds their temporary names too until they are
// renamed: three of its eight flushes, issue 31, item 4); made with its
// room, it pays only the barrier of its Mkdir. The room is a hint,
// reckoned for every name to need a long name where it is not a short
// name already: a directory that still fills up grows as before, and
// the FAT12/16 root, fixed in size, is left as it is.
func (fs *FS) MakeRoom(dir string, names []string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.writable(); err != nil {
		return fatcore.PathErr("mkdir", dir, err)
	}
	need, k := roomSlots(names)
	parent, e, _, err := fs.resolve(dir)
	if err != nil {
		return fatcore.PathErr("mkdir", dir, err)
	}
	if parent != nil && e == nil {
		fs.mkdirSlots = need + 2 // and "." and ".."
		defer func() { fs.mkdirSlots = 0 }()
		return fs.paths.MkdirHeld(dir)
	}
	d, err := fs.dirTree().Dir(fatcore.SplitPath(dir))
	if err != nil {
		return fatcore.PathErr("mkdir", dir, err)
	}
	if d.fixed || d.corrupt() != nil {
		return nil // what writes to it says what is wrong
	}
	if n := fs.roomClusters(need, d.slots(), d.slots()-d.end+d.reusableSlots(k)); n > 0 {
		return fatcore.PathErr("mkdir", dir, d.growBy(n))
	}
	return nil
}

// roomSlots is the directory slots entries of names take: one for a
// short name, one more per 13 characters of a long one, and an eighth
// on top for the slots skipped so that no entry straddles a sector; and
// the slots of the largest entry.
func roomSlots(names []string) (n, largest int) {
	for _, name := range names {
		k := 1
		if _, _, ok := exactShortName(name); !ok {
			k += lfnSlots(name)
		}
		n += k
		largest = max(largest, k)
	}
	return n + n/8, largest
}

// reusableSlots counts the deleted slots before the end that entries of k
// slots can take, as place reuses them: whole entries in runs of deleted
// slots inside one sector. (The slots skipped so that no entry straddles
// a sector are deleted ones too, in runs too short to reuse.)
func (d *dirCache) reusableSlots(k int) int {
	if d.free == 0 || k <= 0 {
		return 0
	}
	sps := d.slotsPerSector()
	n, run := 0, 0
	for i := 0; i <= d.end; i++ {
		if i < d.end && i%sps != 0 && d.data[i*32] == slotDeleted {
			run++
			continue
		}
		n += run / k * k
		run = 0
		if i < d.end && d.data[i*32] == slotDeleted {
			run = 1
		}
	}
	return n
}

// roomClusters is how many clusters a directory of have slots, of which
// free are free, grows by to hold need more: none when they fit, and no
// more than grow would take (the largest directory, a sixteenth of the
// free space).
func (fs *FS) roomClusters(need, have, free int) uint32 {
	if need <= free {
		return 0
	}
	spc := fs.g.clusterSize / 32
	n := (need - free + spc - 1) / spc
	n = min(n, (maxDirSlots-have)/spc, int(fs.fat.available()/16))
	return uint32(max(n, 0))
}
