// Package ext4 reads ext2, ext3 and ext4 filesystems on any io.ReaderAt of
// known size (an image, or the decrypted data area of an encrypted volume),
// in process, on every platform, without root or a kernel driver, and
// writes and formats them (OpenWritable, Format). It imports only the
// standard library.
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
// Writing (OpenWritable): Create (new or emptied), Write/WriteAt/Truncate
// with holes, Mkdir, Remove (unlink and rmdir, freeing blocks and inodes),
// Rename (over a file or an empty directory, across directories with ".."
// and the link counts fixed), Chtimes, Chmod, Lchown, Symlink (fast below
// 60 bytes, slow above), Link. File maps are extents (in the inode, or
// trees of any depth with checksummed blocks) or, without the extent
// feature, ext2/3 indirect blocks. Directories are linear with checksum
// tails; an indexed (htree) directory that gains a name loses its index,
// as libext2fs does when it cannot keep it (removals keep it valid).
// Every checksum of metadata_csum (crc32c) and gdt_csum (crc16) is kept.
// Free blocks and inodes come from the bitmaps, never the counters, which
// are recomputed. Names over 255 bytes (ErrNameTooLong) and writes larger
// than the free space (ErrNoSpace) are refused before anything is written.
//
// Crash safety: with a journal, the metadata of the operations since the
// last commit is one jbd2 transaction (checksums v3 with metadata_csum),
// committed on Sync and Close (or when it fills a quarter of the journal)
// and then written in place; file data goes in place before the commit
// (ordered mode). After a crash the kernel, e2fsck or OpenWritable replays
// it; OpenWritable replays any journal that needs recovery before it
// writes (descriptor, commit and revoke blocks). Without a journal (ext2)
// a crash can leave the filesystem for e2fsck to mend.
//
// Not written: bigalloc, meta_bg, quota, MMP, casefold, ea_inode, 64 KiB
// blocks, inline-data inodes (new files never use inline data), encrypted
// directories, filesystems not cleanly unmounted or with orphans pending;
// a journal with checksum v1/v2 or fast commits.
//
// Format makes what mkfs.ext4 of e2fsprogs 1.47 makes by default for the
// same size (block size, inode ratio, features, reserved descriptor blocks
// and resize inode, flex_bg, journal size, lost+found); the placement
// inside the groups may differ.
//
// API
//
//	Open(dev, size) (*FS, error)
//	OpenWritable(dev, size) (*Writer, error)      Format(dev, size, opts) error
//	(*Writer) Create Mkdir Remove Rename Chtimes Chmod Lchown Symlink Link Sync Close, and FS's
//	(*WFile) Read ReadAt Write WriteAt Seek Truncate Stat Sync Close
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
