package ext4

import "fmt"

// UsedEnd returns the byte offset, from the start of the device, just past
// the last block in use by the block bitmaps (the bitmaps of groups left
// uninitialised are computed as the kernel does). Everything from there to
// the end of the device is free space that no file, directory, journal or
// metadata copy occupies: where a hidden volume may live inside this
// filesystem, as long as nothing more is written to it.
//
// A journal that needs recovery may hold newer bitmaps than the ones on
// the device, and meta_bg spreads the descriptors this reader does not
// gather: both are refused (ErrUnsupported) rather than guessed.
func (f *FS) UsedEnd() (int64, error) {
	if f.incompat&incompatRecover != 0 {
		return 0, fmt.Errorf("%w: the journal needs recovery (open the filesystem writable once, or run e2fsck), so its bitmaps are not final", ErrUnsupported)
	}
	if f.incompat&incompatMetaBG != 0 {
		return 0, fmt.Errorf("%w: meta_bg group descriptors", ErrUnsupported)
	}
	m, err := loadMeta(f)
	if err != nil {
		return 0, err
	}
	for g := int64(f.groups) - 1; g >= 0; g-- {
		bb, _, err := m.readBitmaps(uint32(g))
		if err != nil {
			return 0, err
		}
		for i := int64(m.groupBlocks(uint32(g))) - 1; i >= 0; i-- {
			if bb[i/8]&(1<<(i%8)) != 0 {
				return (int64(m.groupFirstBlock(uint32(g))) + i + 1) * f.blockSize, nil
			}
		}
	}
	// Not even the superblock is marked: no sane filesystem.
	return 0, fmt.Errorf("%w: no block in use in any block bitmap", ErrCorrupt)
}
