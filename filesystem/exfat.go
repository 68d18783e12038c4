package filesystem

import (
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/cryptvol/cryptvol/exfat"
)

var exfatErrors = []errorPair{
	{exfat.ErrNeedsRepair, ErrNeedsRepair}, // before ErrCorrupt, which it may wrap
	{exfat.ErrNotExFAT, ErrUnknown},
	{exfat.ErrTooSmall, ErrCorrupt},
	{exfat.ErrCorrupt, ErrCorrupt},
	{exfat.ErrUnsupported, ErrUnsupported},
	{exfat.ErrReadOnly, ErrReadOnly},
	{exfat.ErrNoSpace, ErrNoSpace},
	// A file larger than the whole volume does not fit either.
	{exfat.ErrFileTooLarge, ErrFileTooLarge},
	{exfat.ErrNotDir, ErrNotDir},
	{exfat.ErrIsDir, ErrIsDir},
	{exfat.ErrNotEmpty, ErrNotEmpty},
	{exfat.ErrInvalidName, ErrInvalidName},
}

// exfatFS puts exfat.FS behind the interface. exFAT has no links: Lstat
// is Stat and Readlink always fails with fs.ErrInvalid.
type exfatFS struct{ f *exfat.FS }

func (f *exfatFS) Type() string    { return "exfat" }
func (f *exfatFS) Version() string { return "" }
func (f *exfatFS) Label() string   { return f.f.Label() }
func (f *exfatFS) ID() string {
	s := f.f.Serial()
	return fmt.Sprintf("%04X-%04X", s>>16, s&0xFFFF)
}

func (f *exfatFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := f.f.Stat(name)
	if err != nil {
		return nil, classify(err, exfatErrors)
	}
	return fi, nil
}

func (f *exfatFS) Lstat(name string) (fs.FileInfo, error) { return f.Stat(name) }

func (f *exfatFS) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := f.f.ReadDir(name)
	return ents, classify(err, exfatErrors)
}

func (f *exfatFS) Open(name string) (File, error) {
	f2, err := f.f.Open(name)
	if err != nil {
		return nil, classify(err, exfatErrors)
	}
	return &file{f2, exfatErrors}, nil
}

func (f *exfatFS) Readlink(name string) (string, error) {
	if _, err := f.Stat(name); err != nil {
		return "", err
	}
	return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
}

func (f *exfatFS) Statfs() Statfs {
	s := f.f.Statfs()
	return Statfs{BlockSize: s.ClusterSize, TotalBytes: s.TotalBytes, FreeBytes: s.FreeBytes, AvailBytes: s.FreeBytes}
}

func (f *exfatFS) Close() error { return classify(f.f.Close(), exfatErrors) }

// Dirty reports that the filesystem was not closed cleanly (VolumeDirty
// was set when it was opened), for the front ends' warning.
func (f *exfatFS) Dirty() bool { return f.f.Dirty() }

// Recovered lists what the writable open's recovery of an interrupted
// session did (see exfat's recover.go).
func (f *exfatFS) Recovered() []string {
	if r := f.f.Recovery(); r != nil {
		return r.Repaired
	}
	return nil
}

func (f *exfatFS) NeedsRepair() error { return classify(f.f.NeedsRepair(), exfatErrors) }

// KeepMetadata gives replacement the attributes (and the archive bit: it
// is new content) and the creation time of old.
func (f *exfatFS) KeepMetadata(old, replacement string) error {
	fi, err := f.f.Stat(old)
	if err != nil {
		return classify(err, exfatErrors)
	}
	if err := f.f.SetAttributes(replacement, fi.Attributes()|exfat.AttrArchive); err != nil {
		return classify(err, exfatErrors)
	}
	return classify(f.f.SetCreateTime(replacement, fi.CreateTime()), exfatErrors)
}

func (f *exfatFS) Create(name string) (WritableFile, error) {
	ff, err := f.f.Create(name)
	if err != nil {
		return nil, classify(err, exfatErrors)
	}
	return &exfatWritable{file{ff, exfatErrors}, ff}, nil
}

// OpenWrite opens an existing file for reading and writing.
func (f *exfatFS) OpenWrite(name string) (WritableFile, error) {
	ff, err := f.f.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, classify(err, exfatErrors)
	}
	return &exfatWritable{file{ff, exfatErrors}, ff}, nil
}

func (f *exfatFS) Mkdir(name string) error  { return classify(f.f.Mkdir(name), exfatErrors) }
func (f *exfatFS) Remove(name string) error { return classify(f.f.Remove(name), exfatErrors) }
func (f *exfatFS) Rename(oldpath, newpath string) error {
	return classify(f.f.Rename(oldpath, newpath), exfatErrors)
}

// RenameAll renames many files for the flushes of one rename.
func (f *exfatFS) RenameAll(pairs [][2]string) (int, error) {
	n, err := f.f.RenameAll(pairs)
	return n, classify(err, exfatErrors)
}
func (f *exfatFS) Chtimes(name string, atime, mtime time.Time) error {
	return classify(f.f.Chtimes(name, atime, mtime), exfatErrors)
}
func (f *exfatFS) Sync() error { return classify(f.f.Sync(), exfatErrors) }

func (f *exfatFS) Check(repair bool) (CheckReport, error) {
	r, err := f.f.Check(repair)
	if err != nil {
		return nil, classify(err, exfatErrors)
	}
	return r, nil
}

// exfatWritable adds this package's sentinels to an exfat.File's write
// errors.
type exfatWritable struct {
	file
	w *exfat.File
}

func (f *exfatWritable) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	return n, classify(err, exfatErrors)
}

func (f *exfatWritable) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.w.WriteAt(p, off)
	return n, classify(err, exfatErrors)
}

func (f *exfatWritable) Truncate(size int64) error { return classify(f.w.Truncate(size), exfatErrors) }
func (f *exfatWritable) Sync() error               { return classify(f.w.Sync(), exfatErrors) }

// SetReadOnly sets or clears the read-only attribute.
func (f *exfatFS) SetReadOnly(name string, readOnly bool) error {
	fi, err := f.f.Stat(name)
	if err != nil {
		return classify(err, exfatErrors)
	}
	a := fi.Attributes() &^ exfat.AttrDir
	b := a &^ exfat.AttrReadOnly
	if readOnly {
		b |= exfat.AttrReadOnly
	}
	if a == b {
		return nil
	}
	return classify(f.f.SetAttributes(name, b), exfatErrors)
}
