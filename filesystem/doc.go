// Package filesystem is the one interface between a volume's decrypted data
// area and the users of its files (the CLI's ls/get/df/info, the FUSE
// files front end): Open recognises the filesystem with fsprobe and returns
// an FS backed by the right implementation — FAT12/16/32 (package fat,
// read-write), exFAT (package exfat, read-write), ext2/3/4 (package ext4,
// read-only) or NTFS (package ntfs, read-only) — so that callers never know
// which one they have. (ext2/3/4 and NTFS are written by their own
// user-space drivers, fuse2fs and ntfs-3g, stacked on a raw FUSE file: see
// package mount.)
//
// # The contract every implementation keeps
//
// Paths are slash-separated, relative to the filesystem's root, with or
// without a leading "/"; "." and ".." components are resolved, and ".."
// never leaves the root. Name comparison follows the filesystem: exact
// bytes on ext4; case-insensitive on FAT and exFAT, and on NTFS for names
// in the Win32 namespace.
//
// Errors are *fs.PathError values (naming the operation and path) whose
// chain holds an io/fs sentinel where one applies — fs.ErrNotExist (no such
// name), fs.ErrExist, fs.ErrInvalid (e.g. Readlink of something that is
// not a link), fs.ErrPermission, fs.ErrClosed — or one of this package's
// ErrNotDir, ErrIsDir, ErrCorrupt (the on-disk structures are inconsistent),
// ErrUnsupported (a feature the implementation does not read), ErrReadOnly
// (a write to a read-only filesystem), ErrNoSpace, ErrNotEmpty (removing
// a directory that has entries) and ErrInvalidName (a name the filesystem
// cannot store, such as one over 255 of its units). The implementation's
// own sentinel (fat.ErrCorrupt, ext4.ErrCorrupt, ...) stays in the chain too.
// No implementation panics on a damaged or hostile image, and none reads
// outside the size it was given.
//
// Times are absolute instants (time.Time with a location); ModTime is the
// time the content last changed. Their resolution is the filesystem's: 2 s
// for FAT (whose local wall-clock stamps are read in fat.Options.Location),
// 100 ns for NTFS, 1 ns for ext4 with large inodes and 1 s with 128-byte
// ones. Other times, owners and inode numbers are on FileInfo.Sys(); values
// there that implement InodeInfo give the inode (NTFS: MFT record) number
// and the link count, which is how hard links are recognised: each name of
// a hard-linked file is an ordinary entry of its directory, and all its
// names share one Inode().
//
// A symbolic link is an entry whose Mode has fs.ModeSymlink: Lstat and
// ReadDir describe the link, Readlink returns its target as stored (with
// "/" separators; NTFS junctions and absolute Windows links keep their
// drive letter, e.g. "C:/Users"), and Stat and Open follow it inside the
// filesystem (an absolute target starts at the root of the filesystem, not
// of the host) — in the middle of a path they are always followed. A link
// that cannot be followed (dangling, or a Windows absolute target) gives
// fs.ErrNotExist on Stat and Open. Other special files (devices, fifos,
// sockets) are listed with their fs.FileMode type bits and cannot be read.
//
// ReadDir returns a directory's entries without "." and "..", in the
// filesystem's order (callers sort). Open returns a File for files and
// directories; reading a directory fails with ErrIsDir. ReadAt is safe for
// concurrent use on one File; all FS methods are safe for concurrent use.
//
// Writing is optional: an FS that can write also implements Writer, and
// one that can check itself implements Checker; callers use a type
// assertion. A Writer opened read-only still implements Writer, and its
// methods fail with ErrReadOnly.
package filesystem
