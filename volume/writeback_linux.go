package volume

import "golang.org/x/sys/unix"

// StartWriteback starts the writeback of the file's dirty pages in
// [off, off+n) (sync_file_range with SYNC_FILE_RANGE_WRITE: it neither
// waits for it nor flushes the disk's cache; Sync still does both).
func (d *FileDevice) StartWriteback(off, n int64) error {
	rc, err := d.File.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	}); err != nil {
		return err
	}
	return serr
}
