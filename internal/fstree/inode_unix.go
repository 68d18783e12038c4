//go:build unix

package fstree

import (
	"os"
	"syscall"
)

// sourceInode returns a local file's inode number and link count.
func sourceInode(fi os.FileInfo) (ino, nlink uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Ino), uint64(st.Nlink), true
}
