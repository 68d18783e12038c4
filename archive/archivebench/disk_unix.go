//go:build unix

package archivebench

import (
	"os"
	"syscall"
)

// diskBytes returns the bytes a file occupies on disk (allocated blocks),
// and true; elsewhere the apparent size and false.
func diskBytes(fi os.FileInfo) (int64, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512, true
	}
	return fi.Size(), false
}
