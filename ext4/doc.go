// Package ext4 reads ext2, ext3 and ext4 filesystems on any io.ReaderAt of
// known size (an image, or the decrypted data area of an encrypted volume),
// in process, on every platform, without root or a kernel driver. It imports
// only the standard library. It never writes.
//
// What it reads: block sizes 1 KiB to 64 KiB; block-mapped (ext2/3) and
// extent-mapped (ext4) files, uninitialised extents and holes (sparse
// files) as zeros; 32- and 64-bit block numbers and group descriptors,
// flex_bg and meta_bg layouts; linear and hashed (htree, large_dir)
// directories; inline data (small files and directories inside the inode);
// fast and slow symbolic links; files of any size; nanosecond and post-2038
// timestamps; filesystems with or without metadata_csum (checksums are not
// verified: every structure is range-checked instead). The label, UUID and
// the superblock's block and inode counts give Label, UUID and Statfs.
//
// What it refuses (ErrUnsupported): the compression and dirdata features,
// an external journal device, and encrypted files (fscrypt: their names and
// data are ciphertext). A filesystem whose journal still needs recovery is
// read as the main structures stand (what "mount -o ro,noload" shows); the
// journal is not replayed.
//
// API
//
//	Open(dev, size) (*FS, error)
//	(*FS) Stat / Lstat(path) (*FileInfo, error)   ReadDir(path) ([]fs.DirEntry, error)
//	(*FS) Open(path) (*File, error)               Readlink(path) (string, error)
//	(*FS) Label() UUID() Type() Statfs()
//	(*File) Read ReadAt Seek Stat Close
//
// Paths use "/", may start with it or not, and are resolved from the root;
// symbolic links are followed inside the filesystem (an absolute target
// starts at its root), in the middle of a path always and at its end for
// Stat and Open but not Lstat and Readlink. Errors are *fs.PathError values
// wrapping fs.ErrNotExist, fs.ErrInvalid, fs.ErrClosed or this package's
// ErrNotExt, ErrCorrupt and ErrUnsupported.
//
// Speed: directories are read once and kept with an index by name (the
// hash tree is not needed for that: its blocks read as ordinary directory
// blocks); inode table blocks are cached; a file's extent map is built at
// Open and a read makes one device call per contiguous run.
//
// All methods are safe for concurrent use.
package ext4
