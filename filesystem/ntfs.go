package filesystem

import (
	"io/fs"

	"fmt"

	"github.com/cryptvol/cryptvol/ntfs"
)

var ntfsErrors = []errorPair{
	{ntfs.ErrNotNTFS, ErrUnknown},
	{ntfs.ErrCorrupt, ErrCorrupt},
	{ntfs.ErrUnsupported, ErrUnsupported},
}

// ntfsFS puts the read-only ntfs.FS behind the interface.
type ntfsFS struct{ f *ntfs.FS }

func (f *ntfsFS) Type() string    { return "ntfs" }
func (f *ntfsFS) Version() string { return "" }
func (f *ntfsFS) Label() string   { return f.f.Label() }
func (f *ntfsFS) ID() string      { return fmt.Sprintf("%016X", f.f.Serial()) }

func (f *ntfsFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := f.f.Stat(name)
	if err != nil {
		return nil, classify(err, ntfsErrors)
	}
	return fi, nil
}

func (f *ntfsFS) Lstat(name string) (fs.FileInfo, error) {
	fi, err := f.f.Lstat(name)
	if err != nil {
		return nil, classify(err, ntfsErrors)
	}
	return fi, nil
}

func (f *ntfsFS) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := f.f.ReadDir(name)
	return ents, classify(err, ntfsErrors)
}

func (f *ntfsFS) Open(name string) (File, error) {
	f2, err := f.f.Open(name)
	if err != nil {
		return nil, classify(err, ntfsErrors)
	}
	return &file{f2, ntfsErrors}, nil
}

func (f *ntfsFS) Readlink(name string) (string, error) {
	t, err := f.f.Readlink(name)
	return t, classify(err, ntfsErrors)
}

func (f *ntfsFS) Statfs() Statfs {
	s := f.f.Statfs()
	return Statfs{BlockSize: s.ClusterSize, TotalBytes: s.TotalBytes, FreeBytes: s.FreeBytes, AvailBytes: s.FreeBytes}
}

func (f *ntfsFS) Close() error { return f.f.Close() }
