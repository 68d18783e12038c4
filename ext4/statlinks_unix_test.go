//go:build unix

package ext4

import (
	"io/fs"
	"syscall"
)

// linksAndInode is the link count and inode number the host's kernel
// reports for a file of a mounted image (the kernel view of the model
// test).
func linksAndInode(fi fs.FileInfo) (nlink, ino uint64) {
	st := fi.Sys().(*syscall.Stat_t)
	return uint64(st.Nlink), uint64(st.Ino)
}
