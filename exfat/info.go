package exfat

import (
	iofs "io/fs"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// FileInfo describes a file or directory. It implements both fs.FileInfo
// and fs.DirEntry, so ReadDir's entries can be asserted to *FileInfo for
// the exFAT-specific fields.
type FileInfo struct {
	info
	contig bool
}

// info is the shared part under an unexported name, so that FileInfo
// gains its methods but no exported field.
type info = fatcore.Info[Attr]

// Contiguous reports whether the file's clusters are one run recorded
// without a FAT chain (the NoFatChain flag).
func (fi *FileInfo) Contiguous() bool { return fi.contig }

// Info returns fi itself (fs.DirEntry).
func (fi *FileInfo) Info() (iofs.FileInfo, error) { return fi, nil }

// String formats the entry like fs.FormatFileInfo.
func (fi *FileInfo) String() string { return iofs.FormatFileInfo(fi) }

func (fs *FS) info(e *entry) *FileInfo {
	return &FileInfo{
		info: fatcore.NewInfo(e.name, int64(e.size), e.attr, decodeTime(e.mtime, e.m10, e.mtz, fs.loc),
			decodeTime(e.ctime, e.c10, e.ctz, fs.loc), decodeTime(e.atime, 0, e.atz, fs.loc)),
		contig: e.noFatChain(),
	}
}

func (fs *FS) rootInfo() *FileInfo { return &FileInfo{info: fatcore.RootInfo[Attr]()} }
