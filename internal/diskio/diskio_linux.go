package diskio

import (
	"os"

	"golang.org/x/sys/unix"
)

// DropCache writes f's dirty pages and evicts its clean ones from the
// page cache, so that the next read comes from the disk.
func DropCache(f *os.File) {
	f.Sync()
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// allocate gives f size bytes of allocated blocks (fallocate), or at least
// that size.
func allocate(f *os.File, size int64) error {
	if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err == nil {
		return nil
	}
	return f.Truncate(size)
}
