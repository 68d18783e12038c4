package filesystem

import (
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/cryptvol/cryptvol/fat"
)

var fatErrors = []errorPair{
	{fat.ErrNeedsRepair, ErrNeedsRepair}, // before ErrCorrupt, which it wraps
	{fat.ErrNotFAT, ErrUnknown},
	{fat.ErrTooSmall, ErrTooSmall},
	{fat.ErrCorrupt, ErrCorrupt},
	{fat.ErrReadOnly, ErrReadOnly},
	{fat.ErrFileTooLarge, ErrFileTooLarge},
	{fat.ErrNoSpace, ErrNoSpace},
	{fat.ErrNotDir, ErrNotDir},
	{fat.ErrIsDir, ErrIsDir},
	{fat.ErrNotEmpty, ErrNotEmpty},
	{fat.ErrInvalidName, ErrInvalidName},
}

// fatFS puts fat.FS behind the interface. FAT has no links: Lstat is Stat
// and Readlink always fails with fs.ErrInvalid.
type fatFS struct{ f *fat.FS }

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

// fatMaxFileSize is the largest FAT file: the directory entry holds the
// size in 32 bits.
const fatMaxFileSize = 1<<32 - 1

func (f *fatFS) Statfs() Statfs {
	s := f.f.Statfs()
	return Statfs{BlockSize: s.ClusterSize, TotalBytes: s.TotalBytes, FreeBytes: s.FreeBytes, AvailBytes: s.FreeBytes, MaxFileSize: fatMaxFileSize}
}

// Dirty reports that the volume's last session was interrupted and, for a
// read-only open, not recovered: it is shown as it is.
func (f *fatFS) Dirty() bool { return f.f.Dirty() }

// Recovered lists what the writable open's recovery of an interrupted
// session did.
func (f *fatFS) Recovered() []string {
	if r := f.f.Recovery(); r != nil {
		return r.Repaired
	}
	return nil
}

func (f *fatFS) NeedsRepair() error { return classify(f.f.NeedsRepair(), fatErrors) }

// KeepMetadata gives replacement the attributes (and the archive bit: it
// is new content) and the creation time of old.
func (f *fatFS) KeepMetadata(old, replacement string) error {
	fi, err := f.f.Stat(old)
	if err != nil {
		return classify(err, fatErrors)
	}
	if err := f.f.SetAttributes(replacement, fi.Attributes()|fat.AttrArchive); err != nil {
		return classify(err, fatErrors)
	}
	return classify(f.f.SetCreateTime(replacement, fi.CreateTime()), fatErrors)
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

// RenameAll renames many files for the flushes of one rename.
func (f *fatFS) RenameAll(pairs [][2]string) (int, error) {
	n, err := f.f.RenameAll(pairs)
	return n, classify(err, fatErrors)
}

// MakeRoom makes or grows a directory for names in one step.
func (f *fatFS) MakeRoom(dir string, names []string) error {
	return classify(f.f.MakeRoom(dir, names), fatErrors)
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

// SetReadOnly sets or clears the read-only attribute.
func (f *fatFS) SetReadOnly(name string, readOnly bool) error {
	fi, err := f.f.Stat(name)
	if err != nil {
		return classify(err, fatErrors)
	}
	a := fi.Attributes() &^ fat.AttrDir
	b := a &^ fat.AttrReadOnly
	if readOnly {
		b |= fat.AttrReadOnly
	}
	if a == b {
		return nil
	}
	return classify(f.f.SetAttributes(name, b), fatErrors)
}
