package fat

// UsedEnd returns the byte offset, from the start of the device, just past
// the last cluster in use (or past the FATs and root directory when no
// cluster is used). Everything from there to the end of the filesystem is
// free space that no file or directory occupies: where a hidden volume may
// live inside this one without anything in it being overwritten, as long as
// nothing more is written to this filesystem.
func (fs *FS) UsedEnd() int64 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for c := fs.fat.count - 1; c >= 2; c-- {
		if fs.fat.get(c) != 0 {
			return fs.g.clusterOffset(c) + int64(fs.g.clusterSize)
		}
	}
	return fs.g.clusterOffset(2)
}
