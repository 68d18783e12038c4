//go:build linux

package archivebench

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropCache asks the kernel to forget the file's cached pages
// (posix_fadvise DONTNEED; the file must be synced). It reports whether the
// platform can do that without privileges.
func dropCache(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return true, err
	}
	defer f.Close()
	return true, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
