package fatcore

import (
	iofs "io/fs"
	"time"
)

// The DOS attribute bits. exFAT kept FAT's values (in a 16-bit field), so
// both packages define their Attr constants from these.
const (
	AttrReadOnly = 0x01
	AttrHidden   = 0x02
	AttrSystem   = 0x04
	AttrDir      = 0x10
	AttrArchive  = 0x20
)

// Info is what a FAT and an exFAT directory entry say alike about a file.
// Each package's FileInfo embeds it and adds the fields only its format
// has; A is that package's Attr type (8 bits on FAT, 16 on exFAT).
type Info[A ~uint8 | ~uint16] struct {
	name     string
	size     int64
	attr     A
	modTime  time.Time
	created  time.Time
	accessed time.Time
}

// NewInfo describes an entry. A directory's size is reported as 0: on
// exFAT it is its allocation and on FAT it is 0 anyway, and io/fs callers
// expect no length for a directory.
func NewInfo[A ~uint8 | ~uint16](name string, size int64, attr A, mod, created, accessed time.Time) Info[A] {
	if attr&AttrDir != 0 {
		size = 0
	}
	return Info[A]{name: name, size: size, attr: attr, modTime: mod, created: created, accessed: accessed}
}

// RootInfo describes the root directory, which has no entry (so no times).
func RootInfo[A ~uint8 | ~uint16]() Info[A] { return Info[A]{name: "/", attr: AttrDir} }

// Name is the name as stored (FAT: the long name, or the short one when
// there is no long one).
func (fi *Info[A]) Name() string { return fi.name }

// Size is the length in bytes (0 for directories).
func (fi *Info[A]) Size() int64 { return fi.size }

// Attributes returns the attribute bits.
func (fi *Info[A]) Attributes() A { return fi.attr }

// IsDir reports whether this is a directory.
func (fi *Info[A]) IsDir() bool { return fi.attr&AttrDir != 0 }

// Mode maps the attributes to permission bits: 0755 for directories, 0644
// for files, without write bits when the read-only attribute is set.
func (fi *Info[A]) Mode() iofs.FileMode {
	m := iofs.FileMode(0o644)
	if fi.IsDir() {
		m = iofs.ModeDir | 0o755
	}
	if fi.attr&AttrReadOnly != 0 {
		m &^= 0o222
	}
	return m
}

// ModTime is the last modification time (FAT: 2 s resolution; exFAT:
// 10 ms, in the UTC offset recorded with it).
func (fi *Info[A]) ModTime() time.Time { return fi.modTime }

// CreateTime is the creation time (10 ms resolution).
func (fi *Info[A]) CreateTime() time.Time { return fi.created }

// AccessTime is the last access time (FAT keeps only the date: midnight
// of that day; exFAT: 2 s resolution).
func (fi *Info[A]) AccessTime() time.Time { return fi.accessed }

// Sys returns nil.
func (fi *Info[A]) Sys() any { return nil }

// Type returns the type bits of Mode (fs.DirEntry).
func (fi *Info[A]) Type() iofs.FileMode { return fi.Mode().Type() }

// Statfs describes the space on the volume: the clusters of the data area
// (FAT) or cluster heap (exFAT), the only space files can use.
type Statfs struct {
	ClusterSize   int
	TotalClusters uint32
	FreeClusters  uint32
	TotalBytes    int64 // TotalClusters * ClusterSize
	FreeBytes     int64
}

// NewStatfs fills a Statfs from the cluster counts.
func NewStatfs(clusterSize int, total, free uint32) Statfs {
	cs := int64(clusterSize)
	return Statfs{ClusterSize: clusterSize, TotalClusters: total, FreeClusters: free,
		TotalBytes: int64(total) * cs, FreeBytes: int64(free) * cs}
}
