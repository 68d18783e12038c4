// Package fat reads and writes FAT12, FAT16 and FAT32 filesystems (with
// VFAT long names) on any io.ReaderAt + io.WriterAt of known size: an
// image file, an in-memory buffer, or the decrypted data area of an
// encrypted volume. It needs no root, no kernel driver and no mount, and
// it imports only the standard library.
//
// # API
//
//	Format(dev, size, FormatOptions{Label, Serial, Type, ClusterSize}) error
//	Open(dev, size) (*FS, error)   OpenWithOptions(dev, size, Options{ReadOnly, Location, Now})
//
//	(*FS) ReadDir(path) ([]fs.DirEntry, error)   entries are *FileInfo
//	(*FS) Stat(path) (*FileInfo, error)          Name, Size, ModTime, IsDir, Mode,
//	                                              Attributes, ShortName, CreateTime, AccessTime
//	(*FS) Open(path) / Create(path) / OpenFile(path, os.O_* flags, perm) (*File, error)
//	(*FS) ReadFile / WriteFile
//	(*FS) Mkdir / MkdirAll / Remove / RemoveAll / Rename(old, new)
//	(*FS) Chtimes(path, atime, mtime) / SetCreateTime / SetAttributes
//	(*FS) Statfs() Statfs   Label() Serial() Type() ClusterSize()
//	(*FS) Check(repair bool) (*CheckReport, error)
//	(*FS) Sync() / Close()
//	(*FS) IOFS() fs.FS      a read-only io/fs view (fs.ReadDirFS, fs.StatFS, fs.ReadFileFS)
//
//	(*File) Read ReadAt Write WriteAt Seek Truncate Sync Close Stat ReadDir Name
//
// Paths use "/" and may start with it or not; "." components are cleaned
// and ".." never leaves the root. Names compare case-insensitively, as on
// every FAT driver, and keep the spelling they were created with. Errors
// are *fs.PathError values wrapping io/fs sentinels (fs.ErrNotExist,
// fs.ErrExist, fs.ErrInvalid, fs.ErrPermission, fs.ErrClosed) or this
// package's (ErrNotFAT, ErrCorrupt, ErrNoSpace, ErrNotEmpty, ErrIsDir,
// ErrNotDir, ErrInvalidName, ErrFileTooLarge, ErrReadOnly, ErrTooSmall),
// always with the detail of what was wrong where.
//
// All methods are safe for concurrent use; one lock serialises them.
//
// # Format
//
// Format chooses the FAT type, cluster size, reserved sectors, FAT size,
// root directory size and fake CHS geometry exactly as mkfs.fat from
// dosfstools 4.2 does for a regular file of the same size (see
// mkfsparams.go; TestFormatMatchesMkfs compares the boot sectors for 29
// sizes and options). It writes a quick format: boot sector(s), FSInfo,
// FATs and root directory, with the boot sector last.
//
// # Names and times
//
// Long names are stored as UTF-16 (characters outside the BMP as surrogate
// pairs) with the checksum of their 8.3 name. Short names are generated the
// Windows/Linux way (upper case, invalid characters as '_', "~N" tails,
// matching what mtools generates), and names that are valid 8.3 names in
// one case per part are stored without a long name, using the Windows NT
// lower-case flags. Timestamps are local wall-clock time in
// Options.Location (time.Local by default), as DOS, Windows, mtools and
// mkfs.fat write them; modification times have two-second steps, creation
// times 10 ms steps, and the access time is a date. Reading does not
// update access dates.
//
// # Caching and speed
//
// The whole FAT is held in memory (4 bytes per cluster at most), loaded at
// Open; changes mark FAT sectors dirty and only those are written, to
// every FAT copy. Free-cluster search runs from a moving cursor, so
// allocation does not rescan the FAT. Directories are cached once read,
// with an index by name. File data is not cached: reads and writes go
// straight to the device, one call per run of contiguous clusters, and
// ReadAt/WriteAt inside a file allocate nothing. On FAT32 the FSInfo
// free-cluster count and next-free hint are kept right: the count is
// marked unknown on disk before the first change and written back by Sync
// and Close.
//
// # Crash safety
//
// Writes are ordered so that a crash (the device stopping after any
// single write) leaves a filesystem fsck.fat accepts with at most lost
// clusters, and never loses a file that existed before the operation.
// TestCrashSafety replays each operation below stopping after every one of
// its writes.
//
//   - New file (WriteFile, Create+Write+Close): data first, then the FAT
//     (all copies), then the directory entry, created with its first
//     cluster and size in one sector write. A crash leaves either no file
//     or the complete file (plus lost clusters). If another operation
//     writes the same directory sector before the file is closed, the
//     entry can reach the disk earlier as an empty file.
//   - Replacing a file's content (WriteFile on an existing file, or
//     O_TRUNC / Truncate(0) followed by writes): the old clusters stay
//     allocated and referenced; the new content goes into new clusters;
//     at Close the entry is switched to the new chain and size in one
//     sector write, and only then are the old clusters freed. A crash
//     leaves the old content or the new, never a mix.
//   - Appending (writing past the end): data into new clusters, FAT, then
//     the entry's size. Between the last two the old content is intact but
//     its chain is longer than its size; fsck.fat and Check(true) cut it.
//   - Overwriting bytes inside a file's current size goes straight to its
//     clusters: after a crash those bytes may be partly old and partly
//     new. The size and the chain stay consistent.
//   - Shrinking (Truncate to a smaller non-zero size): the entry's new
//     size first, then the chain is cut: a crash in between leaves a chain
//     longer than its file.
//   - Remove: the directory entry is erased first (its 8.3 slot's sector
//     first), then the clusters are freed: a crash leaves lost clusters.
//     A file that is still open keeps its clusters, and stays readable and
//     writable through its handles, until its last Close.
//   - Mkdir: the new directory's cluster (".", "..", zeros) and the FAT
//     first, then the parent's entry.
//   - A directory that must grow gets a cluster that is zeroed on disk
//     before it is linked into the chain.
//   - Rename writes the new entry before erasing the old one, so a crash
//     in between leaves both names pointing at the same clusters (fsck.fat
//     reports them as sharing clusters and keeps the first, Check reports
//     a cross-link); the file is never lost. Replacing an existing file
//     rewrites that file's 8.3 slot in place, then erases the source
//     entry, then frees the replaced clusters. A directory moved to
//     another parent has its ".." fixed last, so a crash just before
//     leaves a ".." that fsck.fat corrects.
//   - A crash between the writes of the two FAT copies leaves them
//     different; fsck.fat uses the first and Check(true) rewrites the
//     others from it.
//
// This is ordering, not journaling: it holds when the device applies
// writes in the order it receives them and a single write is atomic, as
// for a process that stops, or a device that is synced between writes.
// The page cache of the host can reorder writes on power loss; FS.Sync
// and File.Sync call the device's Sync method (if it has one) at the end,
// not between every write.
//
// After a write error the FS stops writing altogether (every later change
// fails), because its memory no longer matches the disk.
//
// # Damaged volumes
//
// Open checks the boot sector and never panics on any input (FuzzOpen).
// Cluster chains are followed with loop and range checks; a chain that
// loops, leaves the volume or runs into a free cluster, a file larger than
// its chain, or a directory full of garbage produces an error wrapping
// ErrCorrupt that names the file and the problem. No read or write ever
// leaves the filesystem's extent. A directory with invalid entries is
// listed (its valid entries, plus the error) but never written to, and a
// file with a broken chain is not removed (its clusters might belong to
// someone else): Check reports both.
//
// Check walks the volume as it is on disk and reports lost clusters,
// cross-links, bad entries and broken chains, chains longer than their
// files, orphaned long-name slots, FAT copies that differ and a wrong
// FSInfo count. Check(true) frees lost clusters, cuts long chains, rewrites
// the FAT copies from the first and fixes the FSInfo count; it reports the
// rest.
//
// # Limits
//
// Files are at most 4 GiB - 1 bytes (the FAT entry's size field);
// directories at most 65,536 slots. Directory caches are not evicted, so
// memory grows with the number of directories visited. 8.3 names are
// generated from ASCII only (other characters become '_' and live in the
// long name); short names with bytes above 0x7F written by other systems
// are read as code page 850.
package fat
