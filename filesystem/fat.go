package filesystem

import (
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/cryptvol/cryptvol/fat"
)

var fatErrors = []errorPair{
	{fat.ErrNotFAT, ErrUnknown},
	{fat.ErrTooSmall, ErrCorrupt},
	{fat.ErrCorrupt, ErrCorrupt},
	{fat.ErrReadOnly, ErrReadOnly},
	{fat.ErrNoSpace, ErrNoSpace},
	{fat.ErrNotDir, ErrNotDir},
	{fat.ErrIsDir, ErrIsDir},
	{fat.ErrNotEmpty, ErrNotEmpty},
	{fat.ErrInvalidName, ErrInvalidName},
}

// fatFS puts fat.FS behind the interface. FAT has no links: Lstat is Stat
// and Readlink always fails with fs.ErrInvalid.
type fatFS struct{ f *fat.FS }

// FAT returns the fat.FS behind fsys, for FAT-only operations (format
// options, attributes), or nil when fsys is not FAT.
func FAT(fsys FS) *fat.FS {
	if f, ok := fsys.(*fatFS); ok {
		return f.f
	}
	return nil
}

func (f *fatFS) Type() string    { return "vfat" }
func (f *fatFS) Version() string { return f.f.Type().String() }
func (f *fatFS) Label() string   { return f.f.Label() }
func (f *fatFS) ID() string {
	s := f.f.Serial()
	return fmt.Sprintf("%04X-%04X", s>>16, s&0xFFFF)
}

func (f *fatFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := f.f.Stat(name)
	if err != nil {
		return nil, classify(err, fatErrors)
	}
	return fi, nil
}

func (f *fatFS) Lstat(name string) (fs.FileInfo, error) { return f.Stat(name) }

func (f *fatFS) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := f.f.ReadDir(name)
	return ents, classify(err, fatErrors)
}

func (f *fatFS) Open(name string) (File, error) {
	f2, err := f.f.Open(name)
	if err != nil {
		return nil, classify(err, fatErrors)
	}
	return &file{f2, fatErrors}, nil
}

func (f *fatFS) Readlink(name string) (string, error) {
	if _, err := f.Stat(name); err != nil {
		return "", err
	}
	return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
}

func (f *fatFS) Statfs() Statfs {
	s := f.f.Statfs()
	return Statfs{BlockSize: s.ClusterSize, TotalBytes: s.TotalBytes, FreeBytes: s.FreeBytes, AvailBytes: s.FreeBytes}
}

func (f *fatFS) Close() error { return classify(f.f.Close(), fatErrors) }

func (f *fatFS) Create(name string) (WritableFile, error) {
	ff, err := f.f.Create(name)
	if err != nil {
		return nil, classify(err, fatErrors)
	}
	return &fatWritable{file{ff, fatErrors}, ff}, nil
}

// OpenWrite opens an existing file for reading and writing.
func (f *fatFS) OpenWrite(name string) (WritableFile, error) {
	ff, err := f.f.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, classify(err, fatErrors)
	}
	return &fatWritable{file{ff, fatErrors}, ff}, nil
}

func (f *fatFS) Mkdir(name string) error  { return classify(f.f.Mkdir(name), fatErrors) }
func (f *fatFS) Remove(name string) error { return classify(f.f.Remove(name), fatErrors) }
func (f *fatFS) Rename(oldpath, newpath string) error {
	return classify(f.f.Rename(oldpath, newpath), fatErrors)
}
func (f *fatFS) Chtimes(name string, atime, mtime time.Time) error {
	return classify(f.f.Chtimes(name, atime, mtime), fatErrors)
}
func (f *fatFS) Sync() error { return classify(f.f.Sync(), fatErrors) }

func (f *fatFS) Check(repair bool) (CheckReport, error) {
	r, err := f.f.Check(repair)
	if err != nil {
		return nil, classify(err, fatErrors)
	}
	return r, nil
}

// fatWritable adds this package's sentinels to a fat.File's write errors.
type fatWritable struct {
	file
	w *fat.File
}

func (f *fatWritable) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	return n, classify(err, fatErrors)
}

func (f *fatWritable) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.w.WriteAt(p, off)
	return n, classify(err, fatErrors)
}

func (f *fatWritable) Truncate(size int64) error { return classify(f.w.Truncate(size), fatErrors) }
func (f *fatWritable) Sync() error               { return classify(f.w.Sync(), fatErrors) }
