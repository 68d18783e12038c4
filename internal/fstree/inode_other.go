//go:build !unix

package fstree

import "os"

// sourceInode is unknown here: hard links are not compared.
func sourceInode(fi os.FileInfo) (ino, nlink uint64, ok bool) { return 0, 0, false }
