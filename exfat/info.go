package exfat

import (
	iofs "io/fs"
	"time"
)

// FileInfo describes a file or directory. It implements both fs.FileInfo
// and fs.DirEntry, so ReadDir's entries can be asserted to *FileInfo for
// the exFAT-specific fields.
type FileInfo struct {
	name     string
	size     int64
	attr     Attr
	modTime  time.Time
	created  time.Time
	accessed time.Time
	contig   bool
}

// Name is the name as stored.
func (fi *FileInfo) Name() string { return fi.name }

// Size is the length in bytes (0 for directories).
func (fi *FileInfo) Size() int64 { return fi.size }

// Attributes returns the attribute bits.
func (fi *FileInfo) Attributes() Attr { return fi.attr }

// IsDir reports whether this is a directory.
func (fi *FileInfo) IsDir() bool { return fi.attr&AttrDir != 0 }

// Mode maps the attributes to permission bits: 0755 for directories, 0644
// for files, without write bits when the read-only attribute is set.
func (fi *FileInfo) Mode() iofs.FileMode {
	m := iofs.FileMode(0o644)
	if fi.IsDir() {
		m = iofs.ModeDir | 0o755
	}
	if fi.attr&AttrReadOnly != 0 {
		m &^= 0o222
	}
	return m
}

// ModTime is the last modification time (10 ms resolution), in the UTC
// offset recorded with it.
func (fi *FileInfo) ModTime() time.Time { return fi.modTime }

// CreateTime is the creation time (10 ms resolution).
func (fi *FileInfo) CreateTime() time.Time { return fi.created }

// AccessTime is the last access time (2 s resolution).
func (fi *FileInfo) AccessTime() time.Time { return fi.accessed }

// Contiguous reports whether the file's clusters are one run recorded
// without a FAT chain (the NoFatChain flag).
func (fi *FileInfo) Contiguous() bool { return fi.contig }

// Sys returns nil.
func (fi *FileInfo) Sys() any { return nil }

// Type returns the type bits of Mode (fs.DirEntry).
func (fi *FileInfo) Type() iofs.FileMode { return fi.Mode().Type() }

// Info returns fi itself (fs.DirEntry).
func (fi *FileInfo) Info() (iofs.FileInfo, error) { return fi, nil }

// String formats the entry like fs.FormatFileInfo.
func (fi *FileInfo) String() string { return iofs.FormatFileInfo(fi) }

func (fs *FS) info(e *entry) *FileInfo {
	fi := &FileInfo{
		name:     e.name,
		size:     int64(e.size),
		attr:     e.attr,
		modTime:  decodeTime(e.mtime, e.m10, e.mtz, fs.loc),
		created:  decodeTime(e.ctime, e.c10, e.ctz, fs.loc),
		accessed: decodeTime(e.atime, 0, e.atz, fs.loc),
		contig:   e.noFatChain(),
	}
	if e.isDir() {
		fi.size = 0
	}
	return fi
}

func (fs *FS) rootInfo() *FileInfo {
	return &FileInfo{name: "/", attr: AttrDir}
}
