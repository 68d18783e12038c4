package exfat

// UsedEnd returns the byte offset, from the start of the device, just past
// the last cluster in use (or the start of the cluster heap when none is).
// Everything from there to the end of the volume is free space no file or
// directory occupies: where a hidden volume may live inside this one, as
// long as nothing more is written to this filesystem.
func (fs *FS) UsedEnd() int64 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for c := fs.g.clusterCount + 1; c >= 2; c-- {
		if fs.bm.used(c) {
			return fs.g.clusterOffset(c) + int64(fs.g.clusterSize)
		}
	}
	return fs.g.heapOffset
}
