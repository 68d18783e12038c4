package fat

import (
	iofs "io/fs"
	"time"
)

// FileInfo describes a file or directory. It implements both fs.FileInfo
// and fs.DirEntry, so ReadDir's entries can be asserted to *FileInfo for
// the FAT-specific fields.
type FileInfo struct {
	name      string
	shortName string
	size      int64
	attr      Attr
	modTime   time.Time
	created   time.Time
	accessed  time.Time
	damage    string
}

// Damage says why the entry cannot be valid ("" for a valid one): a
// forbidden character in its short name (it is then listed with '?' for
// each such character, and can be read, moved and removed), or a first
// cluster or size that cannot be right (it can be removed, which frees
// nothing, not read). Check(true) repairs both.
func (fi *FileInfo) Damage() string { return fi.damage }

// Name is the long name (or the short name when there is no long one).
func (fi *FileInfo) Name() string { return fi.name }

// ShortName is the 8.3 name, as stored (upper case).
func (fi *FileInfo) ShortName() string { return fi.shortName }

// Size is the length in bytes (0 for directories).
func (fi *FileInfo) Size() int64 { return fi.size }

// Attributes returns the DOS attribute bits.
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

// ModTime is the last modification time (2-second resolution).
func (fi *FileInfo) ModTime() time.Time { return fi.modTime }

// CreateTime is the creation time (10 ms resolution).
func (fi *FileInfo) CreateTime() time.Time { return fi.created }

// AccessTime is the last access date (midnight of that day).
func (fi *FileInfo) AccessTime() time.Time { return fi.accessed }

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
		name:      e.name,
		shortName: e.short.String(),
		size:      int64(e.size),
		attr:      e.attr,
		modTime:   decodeTime(e.mdate, e.mtime, 0, fs.loc),
		created:   decodeTime(e.cdate, e.ctime, e.ccenti, fs.loc),
		accessed:  decodeTime(e.adate, 0, 0, fs.loc),
		damage:    e.damage,
	}
	if e.isDir() {
		fi.size = 0
	}
	return fi
}

func (fs *FS) rootInfo() *FileInfo {
	return &FileInfo{name: "/", attr: AttrDir}
}
