package filesystem

import (
	"io"
	"io/fs"
	"time"

	"github.com/cryptvol/cryptvol/ext4"
)

var ext4WriteErrors = append([]errorPair{
	{ext4.ErrNoSpace, ErrNoSpace},
	{ext4.ErrNeedsRecovery, ErrUnsupported},
	{ext4.ErrTooSmall, ErrTooSmall},
	{ext4.ErrNotEmpty, ErrNotEmpty},
	{ext4.ErrNameTooLong, ErrInvalidName},
}, ext4Errors...)

// OpenExt4Writable opens the ext2/3/4 filesystem on dev with the
// in-process writer (ext4.OpenWritable); Open with Options.Writable does
// the same.
func OpenExt4Writable(dev interface {
	io.ReaderAt
	io.WriterAt
}, size int64) (Writer, error) {
	w, err := ext4.OpenWritable(dev, size)
	if err != nil {
		return nil, classify(err, ext4WriteErrors)
	}
	return &extWriter{extFS{w.FS}, w}, nil
}

// extWriter puts ext4.Writer behind the interface.
type extWriter struct {
	extFS
	w *ext4.Writer
}

var _ Writer = (*extWriter)(nil)

func (f *extWriter) Close() error { return classify(f.w.Close(), ext4WriteErrors) }

func (f *extWriter) Create(name string) (WritableFile, error) {
	wf, err := f.w.Create(name)
	if err != nil {
		return nil, classify(err, ext4WriteErrors)
	}
	return &extWritable{file{wf, ext4WriteErrors}, wf}, nil
}

func (f *extWriter) Mkdir(name string) error  { return classify(f.w.Mkdir(name), ext4WriteErrors) }
func (f *extWriter) Remove(name string) error { return classify(f.w.Remove(name), ext4WriteErrors) }
func (f *extWriter) Rename(oldpath, newpath string) error {
	return classify(f.w.Rename(oldpath, newpath), ext4WriteErrors)
}
func (f *extWriter) Chtimes(name string, atime, mtime time.Time) error {
	return classify(f.w.Chtimes(name, atime, mtime), ext4WriteErrors)
}
func (f *extWriter) Sync() error { return classify(f.w.Sync(), ext4WriteErrors) }

// extWritable adds this package's sentinels to an ext4.WFile's write
// errors.
type extWritable struct {
	file
	w *ext4.WFile
}

func (f *extWritable) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	return n, classify(err, ext4WriteErrors)
}

func (f *extWritable) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.w.WriteAt(p, off)
	return n, classify(err, ext4WriteErrors)
}

func (f *extWritable) Truncate(size int64) error {
	return classify(f.w.Truncate(size), ext4WriteErrors)
}
func (f *extWritable) Sync() error { return classify(f.w.Sync(), ext4WriteErrors) }

func (f *extWriter) Symlink(target, name string) error {
	return classify(f.w.Symlink(target, name), ext4WriteErrors)
}

func (f *extWriter) Chmod(name string, mode fs.FileMode) error {
	return classify(f.w.Chmod(name, mode), ext4WriteErrors)
}

var (
	_ Symlinker = (*extWriter)(nil)
	_ Chmoder   = (*extWriter)(nil)
)

// FormatExt4 makes an ext4 filesystem of size bytes on dev, as mkfs.ext4
// of e2fsprogs 1.47 does with its defaults (ext4.Format), with blocks of
// at least minBlockSize bytes (the device's sector size; 0 for mkfs's
// choice).
func FormatExt4(dev interface {
	io.ReaderAt
	io.WriterAt
}, size int64, label string, minBlockSize int) error {
	return classify(ext4.Format(dev, size, ext4.FormatOptions{Label: label, MinBlockSize: minBlockSize}), ext4WriteErrors)
}
