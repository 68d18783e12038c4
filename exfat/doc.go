// Package exfat reads and writes exFAT filesystems, written from
// Microsoft's published exFAT specification, on any io.ReaderAt +
// io.WriterAt of known size: an image file, an in-memory buffer, or the
// decrypted data area of an encrypted volume. It needs no root, no kernel
// driver and no mount, and it imports only the standard library. Its API
// is that of package fat, so one adapter serves both.
//
// # API
//
//	Format(dev, size, FormatOptions{Label, Serial, ClusterSize, Align}) error
//	Open(dev, size) (*FS, error)   OpenWithOptions(dev, size, Options{ReadOnly, Location, Now})
//
//	(*FS) ReadDir(path) ([]fs.DirEntry, error)   entries are *FileInfo
//	(*FS) Stat(path) (*FileInfo, error)          Name, Size, ModTime, IsDir, Mode,
//	                                              Attributes, CreateTime, AccessTime, Contiguous
//	(*FS) Open(path) / Create(path) / OpenFile(path, os.O_* flags, perm) (*File, error)
//	(*FS) ReadFile / WriteFile
//	(*FS) Mkdir / MkdirAll / Remove / RemoveAll / Rename(old, new)
//	(*FS) Chtimes(path, atime, mtime) / SetCreateTime / SetAttributes
//	(*FS) Statfs() Statfs   Label() Serial() ClusterSize() Dirty() UsedEnd()
//	(*FS) Check(repair bool) (*CheckReport, error)   report.ExitCode(): 0 clean, 1 repaired, 3 errors remain
//	(*FS) Sync() / Close()
//	(*FS) IOFS() fs.FS      a read-only io/fs view (fs.ReadDirFS, fs.StatFS, fs.ReadFileFS)
//
//	(*File) Read ReadAt Write WriteAt Seek Truncate Sync Close Stat ReadDir Name
//
// Paths use "/" and may start with it or not; "." components are cleaned
// and ".." never leaves the root. Names compare case-insensitively through
// the volume's own up-case table, as every exFAT driver compares them, and
// keep the spelling they were created with. Errors are *fs.PathError
// values wrapping io/fs sentinels (fs.ErrNotExist, fs.ErrExist,
// fs.ErrInvalid, fs.ErrPermission, fs.ErrClosed) or this package's
// (ErrNotExFAT, ErrCorrupt, ErrUnsupported, ErrNoSpace, ErrNotEmpty,
// ErrIsDir, ErrNotDir, ErrInvalidName, ErrFileTooLarge, ErrReadOnly,
// ErrTooSmall), always with the detail of what was wrong where.
//
// All methods are safe for concurrent use; one lock serialises them.
//
// # Format
//
// Format lays the volume out exactly as mkfs.exfat of exfatprogs 1.2 does
// for a regular file of the same size (512-byte sectors; 4 KiB clusters up
// to 256 MiB, 32 KiB up to 32 GiB, 128 KiB above; FAT and cluster heap on
// 1 MiB boundaries; FAT sized for every cluster the device could hold;
// bitmap, the specification's compressed up-case table and the root
// directory in the first clusters). TestFormatMatchesMkfs compares every
// byte mkfs.exfat writes — both boot regions, the FAT, the bitmap, the
// up-case table, the root directory — for 18 sizes and options, 1 MiB to
// 33 GiB. Like mkfs.exfat, it refuses devices under 3 MiB unless given a
// smaller alignment (FormatOptions.Align, mkfs.exfat -b).
//
// # Files, names and times
//
// A file whose clusters are one run is recorded without a FAT chain (the
// NoFatChain flag, which needs no FAT writes); a file that cannot grow in
// place gets its clusters linked in the FAT from then on. Files may be as
// large as the cluster heap (64-bit sizes: TestFileOver4GiB round-trips a
// 5 GiB file). Bytes past a file's valid data length (which other systems
// may leave below its size) read as zeros; writing past it zeroes the gap
// first. Directories grow a cluster at a time, up to the 256 MiB the
// specification allows. Entry set checksums and name hashes are computed
// on every write and checked on every read.
//
// Timestamps are written in Options.Location (time.Local by default) with
// its UTC offset recorded beside them, so they read back as the same
// instant anywhere; timestamps without a valid offset are read in
// Options.Location. Creation and modification times have 10 ms steps, the
// access time two seconds. Reading does not update access times.
//
// # Caching and speed
//
// The FAT (4 bytes per cluster) and the allocation bitmap (1 bit) are
// held in memory, loaded at Open; changes mark their sectors dirty and
// only those are written. Allocation prefers the clusters right after a
// file's end, then the first run long enough from a moving cursor.
// Directories are cached once read, with an index by up-cased name. File
// data is not cached: reads and writes go straight to the device, one call
// per run of contiguous clusters, and ReadAt/WriteAt inside a file allocate
// nothing.
//
// # Crash safety
//
// Writes are ordered so that a crash (the device stopping after any single
// write) leaves a filesystem that fsck.exfat accepts, with at most
// clusters marked in use that no file needs, and never loses a file that
// existed before the operation. TestCrashSafety replays each operation
// below stopping after every one of its writes, then checks that
// Check(true) leaves a volume fsck.exfat -n finds clean.
//
//   - VolumeDirty is set in the main boot sector before the first write
//     after Open or Sync, and cleared (with PercentInUse brought up to
//     date) by Sync and Close once everything else is on disk. A writable
//     Open of a volume found dirty recovers it first (recover.go): what
//     an interrupted session leaves (two names of one file from a rename,
//     lost clusters) is mended and the flag cleared, which Recovery
//     reports; a volume with more wrong than that, or opened with
//     NoRecovery, stays dirty until Check(true).
//   - Entry sets of up to a sector's worth of entries (names of up to 210
//     UTF-16 units, with 512-byte sectors) are placed within one sector, so
//     creating, updating and removing one is a single sector write. A set
//     written at the end of a directory lands on slots that read as the end
//     of the directory until the sector holding its File entry is written,
//     last, so even longer sets appear in one write; their updates rewrite
//     only the sector holding their File and Stream Extension entries.
//   - New file (WriteFile, Create+Write+Close): data first, then the
//     bitmap, then (if fragmented) the FAT, then the entry set with its
//     first cluster and size. A crash leaves either no file or the complete
//     file. If another operation writes the same directory sector before
//     the file is closed, its set can reach the disk earlier as an empty
//     file.
//   - Replacing a file's content (WriteFile on an existing file, O_TRUNC or
//     Truncate(0) then writes): the old clusters stay allocated and
//     referenced; the new content goes into new clusters; at Close the set
//     is switched to them in one write, and only then are the old clusters
//     freed. A crash leaves the old content or the new, never a mix.
//   - Appending: data into new clusters, bitmap, FAT entries of the new
//     clusters, the link from the old last cluster, then the set's size. A
//     contiguous file that stays contiguous has no FAT step; between the
//     last two steps of a fragmented one its chain is longer than its size,
//     which fsck.exfat and Check(true) cut.
//   - Overwriting bytes inside a file's current size goes straight to its
//     clusters: after a crash those bytes may be partly old and partly new.
//   - Shrinking: the set's new size first, then the chain is cut and the
//     clusters freed.
//   - Remove: the set is marked unused first, then the clusters are freed.
//     A file that is still open keeps its clusters, and stays readable and
//     writable through its handles, until its last Close.
//   - Mkdir: the new directory's cluster is zeroed and marked in the
//     bitmap before its set appears. A directory that must grow gets a
//     cluster zeroed on disk and marked in the bitmap before it is linked
//     and recorded in the directory's own set (a fragmented directory's
//     chain is longer than its recorded size between the last two).
//   - Rename rewrites the set in place (one write) when the new one fits
//     where the old one was in the same directory, or where the file it
//     replaces was. Otherwise the new set is written before the old one is
//     removed, so a crash in between leaves two names for the same clusters
//     (fsck.exfat calls the second cross-linked; Check reports a duplicate
//     and Check(true) removes the second name); the file is never lost. A
//     replaced file's clusters are freed last.
//
// This is ordering, not journaling: it holds when the device applies
// writes in the order it receives them and a single write is atomic, as
// for a process that stops, or a device that is synced between writes.
// FS.Sync and File.Sync call the device's Sync method (if it has one) at
// the end, and before clearing VolumeDirty, not between every write.
//
// After a write error the FS stops writing altogether (every later change
// fails), because its memory no longer matches the disk.
//
// # Damaged volumes
//
// Open checks the boot region and its checksum (falling back on the backup
// region, read-only until Check(true) restores the main one), the bitmap
// and the up-case table, and never panics on any input (FuzzOpen). Chains
// are followed with range checks and cycle detection; a chain that loops,
// leaves the heap or ends early, an entry set that cannot be understood or
// a file larger than its allocation produces an error wrapping ErrCorrupt
// that names the file and the problem. No read or write ever leaves the
// volume. A directory with entries that cannot be understood is listed
// (its valid entries, plus the error) but never written to, and a file
// with a broken chain is not removed (its clusters might belong to someone
// else).
//
// Check walks the volume as it is on disk and reports lost clusters,
// owned clusters the bitmap calls free, cross-links, duplicate entries,
// sets with wrong checksums or name hashes, orphaned secondary entries,
// chains longer than their files, entries it cannot understand, a damaged
// or differing boot region and a set VolumeDirty flag. Check(true)
// repairs all of those but cross-links and entries it cannot understand,
// which it reports.
//
// # Limits
//
// The FAT and the bitmap live in memory (4 bytes and 1 bit per cluster:
// about 4 MiB for a 128 GiB volume with 128 KiB clusters). Only the active
// FAT and bitmap of a TexFAT volume with two FATs are kept up to date.
// Directory caches are not evicted, so memory grows with the number of
// directories visited. A set of more than a sector's worth of entries,
// written by another system across a sector boundary in the middle of a
// directory, is updated in two writes.
package exfat
