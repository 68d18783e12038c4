package filesystem

import (
	"io/fs"

	"github.com/cryptvol/cryptvol/ext4"
)

var ext4Errors = []errorPair{
	{ext4.ErrNotExt, ErrUnknown},
	{ext4.ErrCorrupt, ErrCorrupt},
	{ext4.ErrUnsupported, ErrUnsupported},
}

// extFS puts the read-only ext4.FS behind the interface.
type extFS struct{ f *ext4.FS }

func (f *extFS) Type() string    { return f.f.Type() }
func (f *extFS) Version() string { return "" }
func (f *extFS) Label() string   { return f.f.Label() }
func (f *extFS) ID() string      { return f.f.UUID() }

func (f *extFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := f.f.Stat(name)
	if err != nil {
		return nil, classify(err, ext4Errors)
	}
	return fi, nil
}

func (f *extFS) Lstat(name string) (fs.FileInfo, error) {
	fi, err := f.f.Lstat(name)
	if err != nil {
		return nil, classify(err, ext4Errors)
	}
	return fi, nil
}

func (f *extFS) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := f.f.ReadDir(name)
	return ents, classify(err, ext4Errors)
}

func (f *extFS) Open(name string) (File, error) {
	f2, err := f.f.Open(name)
	if err != nil {
		return nil, classify(err, ext4Errors)
	}
	return &file{f2, ext4Errors}, nil
}

func (f *extFS) Readlink(name string) (string, error) {
	t, err := f.f.Readlink(name)
	return t, classify(err, ext4Errors)
}

func (f *extFS) Statfs() Statfs {
	s := f.f.Statfs()
	avail := int64(0)
	if s.FreeBlocks > s.ReservedBlocks {
		avail = int64(s.FreeBlocks-s.ReservedBlocks) * int64(s.BlockSize)
	}
	return Statfs{BlockSize: s.BlockSize, TotalBytes: s.TotalBytes, FreeBytes: s.FreeBytes,
		AvailBytes: avail, Files: s.Inodes, FreeFiles: s.FreeInodes}
}

func (f *extFS) Close() error { return f.f.Close() }
