package volume

// StartWriteback asks the device to start writing the data area's bytes
// [off, off+n) out to storage now, without waiting for it. It is a hint:
// it changes nothing of what a later Sync guarantees, and is a no-op on
// devices (and systems) that cannot take it. A writer streaming a large
// file calls it behind itself, so that the host's writeback runs while it
// copies instead of all at the final Sync (the ext4 writer does).
func (v *Volume) StartWriteback(off, n int64) error {
	wb, ok := v.dev.(interface{ StartWriteback(off, n int64) error })
	if !ok || n <= 0 || off < 0 || off+n > v.size {
		return nil
	}
	for n > 0 {
		s := v.segmentAt(off)
		rel := off - s.Offset
		k := min(n, s.Size-rel)
		if !s.Zero {
			if err := wb.StartWriteback(s.DevOffset+rel, k); err != nil {
				return err
			}
		}
		off, n = off+k, n-k
	}
	return nil
}
