// Package fat reads and writes FAT12, FAT16 and FAT32 filesystems (with
// VFAT long names) on any io.ReaderAt + io.WriterAt of known size: an
// image file, an in-memory buffer, or the decrypted data area of an
// encrypted volume. It needs no root, no kernel driver and no mount, and
// it imports only the standard library.
//
// # API
//
//	Format(dev, size, FormatOptions{Label, Serial, Type, ClusterSize}) error
//	Open(dev, size) (*FS, error)   OpenWithOptions(dev, size, Options{ReadOnly, Location, Now, NoRecovery})
//
//	(*FS) ReadDir(path) ([]fs.DirEntry, error)   entries are *FileInfo
//	(*FS) Stat(path) (*FileInfo, error)          Name, Size, ModTime, IsDir, Mode,
//	                                              Attributes, ShortName, CreateTime, AccessTime
//	(*FS) Open(path) / Create(path) / OpenFile(path, os.O_* flags, perm) (*File, error)
//	(*FS) ReadFile / WriteFile
//	(*FS) Mkdir / MkdirAll / Remove / RemoveAll / Rename(old, new)
//	(*FS) MakeRoom(dir, names)   a directory made or grown once for entries to come
//	(*FS) Chtimes(path, atime, mtime) / SetCreateTime / SetAttributes
//	(*FS) Statfs() Statfs   Label() Serial() Type() ClusterSize()
//	(*FS) Check(repair bool) (*CheckReport, error)
//	(*FS) Recovery() *CheckReport   Dirty() bool   NeedsRepair() error
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
// ErrNotDir, ErrInvalidName, ErrFileTooLarge, ErrReadOnly, ErrTooSmall,
// and ErrNeedsRepair, which wraps ErrCorrupt), always with the detail of
// what was wrong where.
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
// The goal: a crash (the device stopping after any single write) never
// loses a file that existed before the operation, and the next writable
// Open leaves a volume with no cross-links that fsck.fat accepts without a
// word. Two things give it: the order of the writes, and the volume's dirty
// flag with a recovery of what a crash can leave. TestCrashSafety replays
// each operation below stopping after every one of its writes, then runs
// the next command (and, on FAT12 or with -fat.crashlong, crashes that one
// too after each of its writes).
//
// The dirty flag is set on disk before the first write of a session and
// cleared when the filesystem is consistent again (Close; Sync with no
// file open; the end of a repair). FAT16 and FAT32 keep it in FAT[1]'s
// clean-shutdown bit, as Microsoft's specification and Windows do; FAT12
// has no such bit and uses bit 0 of the boot sector's state byte, which
// Linux sets while a volume is mounted (a volume Linux left with that bit
// set counts as dirty too). fsck.fat reads both ("Dirty bit is set"). A
// writable Open of a dirty volume first recovers it: it walks the tree
// (reading every directory, once) and fixes exactly what an interrupted
// operation of this package can leave, no more: it completes interrupted
// renames, frees lost clusters, cuts chains longer than their files, sets a
// moved directory's ".." right, erases orphaned long-name slots, rewrites
// the FAT copies from the first and the FSInfo count. Recovery returns what
// it did. Anything else it finds is left for Check(true); if that includes
// cross-links, the volume is marked as needing repair (below). Options
// NoRecovery opens a dirty volume as it is (for a checker to report it).
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
//     its chain is longer than its size; recovery cuts it.
//   - Overwriting bytes inside a file's current size goes straight to its
//     clusters: after a crash those bytes may be partly old and partly
//     new. The size and the chain stay consistent.
//   - Shrinking (Truncate to a smaller non-zero size): the entry's new
//     size first, then the chain is cut: a crash in between leaves a chain
//     longer than its file.
//   - Remove: the directory entry is erased first (its 8.3 slot's sector
//     first), then the clusters are freed: a crash leaves lost clusters
//     (and, when the long name spans two sectors, orphaned long-name
//     slots). A file that is still open keeps its clusters, and stays
//     readable and writable through its handles, until its last Close.
//   - Mkdir: the new directory's cluster (".", "..", zeros) and the FAT
//     first, then the parent's entry.
//   - A directory that must grow gets a cluster that is zeroed on disk
//     before it is linked into the chain.
//   - Rename. FAT has no atomic rename across sectors: for a moment both
//     the old and the new entry exist and point at the same clusters, and
//     fsck.fat (or a driver) seeing that could not tell which is stale.
//     So, when the old and the new slots lie in one directory sector, the
//     whole rename is that one write. Otherwise the source entry is first
//     marked as being moved (bit 0x40 of its NT byte, offset 12, which
//     Windows, Linux and dosfstools leave alone), then the new entry is
//     written, then the source erased. Recovery, finding a marked entry
//     and another sharing its first cluster, erases the marked one: the
//     rename is completed. A marked entry alone (the crash came before the
//     new entry) just loses its mark. An empty file has no cluster to
//     match its new entry by, so for it recovery keeps both names (nothing
//     is lost or shared). Replacing an existing file (mv --force) points
//     that file's 8.3 slot at the moved data in place, as the second of
//     those writes, and frees the replaced clusters last; a crash before
//     that leaves them lost, for recovery to free. A directory moved to
//     another parent has its ".." fixed last; recovery fixes it if a crash
//     came first.
//   - A crash between the writes of the two FAT copies leaves them
//     different; fsck.fat uses the first, and so do Open and recovery.
//
// This is ordering, not journaling: it holds when the device applies
// writes in the order it receives them and a single write is atomic, as
// for a process that stops, or a device that is synced between writes.
// The page cache of the host can reorder writes on power loss; FS.Sync
// and File.Sync call the device's Sync method (if it has one) at the end,
// not between every write.
//
// After a write error the FS stops writing altogether (every later change
// fails), because its memory no longer matches the disk; the volume stays
// dirty, for the next Open to recover.
//
// # Cross-links
//
// A cluster claimed by two files is the one damage that turns into data
// loss by itself: removing either file frees the other's data for the next
// allocation. This package never makes one (the rename order above), and
// it guards against those others made:
//   - Before the first operation of a session that frees clusters (Remove,
//     RemoveAll, Rename over an existing file, O_TRUNC, Truncate), the tree
//     is walked once (every directory read) to make sure no cluster has
//     two owners.
//   - Open already sees two chains running together (two clusters pointing
//     at one, found while the FAT is loaded), and recovery sees the rest.
//   - Once a cross-link is found, every change but Check(true) is refused
//     with ErrNeedsRepair, and the volume is marked: FAT16 and FAT32 in
//     FAT[1]'s hard-error bit (clear means "errors found"), FAT12 in bit 1
//     of the boot sector's state byte (Windows NT's "surface test" bit;
//     Linux and fsck.fat ignore it). The next Open reads the mark and
//     refuses changes without walking anything. Clusters that were about
//     to be freed when the refusal came are left allocated.
//   - Check(true) gives each file its own copy of the shared clusters (the
//     second one found gets the copy; fsck.fat would cut it, which is done
//     here only when there is no room for the copy), and lifts the mark.
//
// # Damaged volumes
//
// Open checks the boot sector and never panics on any input (FuzzOpen).
// Cluster chains are followed with loop and range checks; a chain that
// loops, leaves the volume or runs into a free cluster, a file larger than
// its chain, or a directory full of garbage produces an error wrapping
// ErrCorrupt that names the file and the problem. No read or write ever
// leaves the filesystem's extent. A file with a broken chain is not
// removed (its clusters might belong to someone else).
//
// A damaged directory entry does not take its directory with it. An entry
// with a forbidden character in its short name (a '/', say) is listed
// with each such character shown as '?' (a character no valid name has),
// and can be read, renamed and removed under that name; one whose size has
// no cluster, or whose first cluster is outside the volume, is listed and
// can be removed (which frees nothing), not read. FileInfo.Damage says
// what is wrong. The rest of the directory is read and written as usual.
// Only a directory whose damaged entries outnumber the good ones (by
// fsck.fat's measure: more than four entries, over half of them bad) is
// taken for garbage: its valid entries are listed with an error, and
// nothing is written to it.
//
// Check walks the volume as it is on disk and reports lost clusters,
// cross-links, bad entries and broken chains, chains longer than their
// files, wrong "." and "..", duplicate names, interrupted renames,
// orphaned long-name slots, FAT copies that differ, a wrong FSInfo count
// and the dirty and needs-repair flags. Check(true) repairs all of it (its
// doc comment says how, and where that differs from fsck.fat -a); lost
// clusters are freed, as fsck.fat -a does, rather than saved as files
// (fsck.fat -f), because this package never leaves a file's only copy in
// lost clusters. The report's After field is a fresh check made once the
// repair is done.
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
