// Package fsops is put, get, rm, mkdir and mv, once, whatever the
// filesystem (issue 26, item 1): Put, Get, Remove, Mkdir and Move work on
// a Target, which is a Tree over any in-process filesystem.Writer (FAT,
// exFAT, ext2/3/4; it builds create-exclusive, mkdir -p, remove -r and
// symlink from the Writer's operations) or a RootTree over the mount of a
// kernel driver (NTFS through ntfs-3g). The operations print nothing:
// what they skip or sweep reaches callbacks, and their errors are Error
// values of a Kind that front ends map to their exit statuses.
package fsops
