package fat

import (
	iofs "io/fs"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// FileInfo describes a file or directory. It implements both fs.FileInfo
// and fs.DirEntry, so ReadDir's entries can be asserted to *FileInfo for
// the FAT-specific fields.
type FileInfo struct {
	info
	shortName string
	damage    string
}

// info is the shared part under an unexported name, so that FileInfo
// gains its methods but no exported field.
type info = fatcore.Info[Attr]

// Damage says why the entry cannot be valid ("" for a valid one): a
// forbidden character in its short name (it is then listed with '?' for
// each such character, and can be read, moved and removed), or a first
// cluster or size that cannot be right (it can be removed, which frees
// nothing, not read). Check(true) repairs both.
func (fi *FileInfo) Damage() string { return fi.damage }

// ShortName is the 8.3 name, as stored (upper case).
func (fi *FileInfo) ShortName() string { return fi.shortName }

// Info returns fi itself (fs.DirEntry).
func (fi *FileInfo) Info() (iofs.FileInfo, error) { return fi, nil }

// String formats the entry like fs.FormatFileInfo.
func (fi *FileInfo) String() string { return iofs.FormatFileInfo(fi) }

func (fs *FS) info(e *entry) *FileInfo {
	return &FileInfo{
		info: fatcore.NewInfo(e.name, int64(e.size), e.attr, decodeTime(e.mdate, e.mtime, 0, fs.loc),
			decodeTime(e.cdate, e.ctime, e.ccenti, fs.loc), decodeTime(e.adate, 0, 0, fs.loc)),
		shortName: e.short.String(),
		damage:    e.damage,
	}
}

func (fs *FS) rootInfo() *FileInfo { return &FileInfo{info: fatcore.RootInfo[Attr]()} }
