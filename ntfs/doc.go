// Package ntfs reads NTFS filesystems (NTFS 3.x, as Windows NT 4 to 11 and
// ntfs-3g write them) on any io.ReaderAt of known size, in process, on any
// platform, without root or a kernel driver. It imports only the standard
// library. It never writes.
//
// What it reads: resident and non-resident data; files whose attributes
// spread over several MFT records (attribute lists, a fragmented $MFT);
// sparse files (holes and the uninitialised tail read as zeros);
// LZNT1-compressed files; long and Unicode names (UTF-16, surrogate pairs
// included), looked up case-insensitively except for names in the POSIX
// namespace; hard links (every name is listed, all with one MFT record
// number); symbolic links and junctions (reparse points, shown as
// fs.ModeSymlink with their target; also WSL and Interix links); the
// volume label and serial number from $Volume and the boot sector; free
// space from $Bitmap.
//
// What it does not: named data streams (alternate data streams) are not
// listed; EFS-encrypted files are refused (ErrUnsupported), as are files
// whose content lives elsewhere (deduplicated, cloud placeholders), which
// read as what the unnamed $DATA holds. The system files ($MFT, $Bitmap,
// ...; MFT records below 16) are hidden from listings, as ntfs-3g does.
// The $LogFile is not replayed: a volume Windows did not shut down cleanly
// is read as its MFT stands.
//
// API
//
//	Open(dev, size) (*FS, error)
//	(*FS) Stat / Lstat(path) (*FileInfo, error)   ReadDir(path) ([]fs.DirEntry, error)
//	(*FS) Open(path) (*File, error)               Readlink(path) (string, error)
//	(*FS) Label() Serial() Statfs()
//	(*File) Read ReadAt Seek Stat Close
//
// Paths use "/" (never "\"), may start with it or not, and are resolved
// from the root; symbolic links are followed inside the filesystem where
// their target is relative or absolute without a drive letter. Errors are
// *fs.PathError values wrapping fs.ErrNotExist, fs.ErrInvalid, fs.ErrClosed
// or this package's ErrNotNTFS, ErrCorrupt and ErrUnsupported.
//
// Every MFT record and index block is checked (signature, update sequence,
// bounds) before use, and nothing is read outside the filesystem; damaged
// images give ErrCorrupt, never a panic (FuzzOpen).
//
// All methods are safe for concurrent use.
package ntfs
