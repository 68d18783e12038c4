package ext4

import "io/fs"

// linksAndInode: Windows cannot loop-mount an ext4 image (kernelMount
// says why and the kernel view is never taken), so there is nothing to
// report.
func linksAndInode(fs.FileInfo) (nlink, ino uint64) { return 0, 0 }
