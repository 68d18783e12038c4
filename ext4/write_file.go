package ext4

import (
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"

	"github.com/cryptvol/cryptvol/internal/fspath"
)

// WFile is a regular file opened by Writer.Create. Each Write, WriteAt
// and Truncate changes the filesystem before it returns.
type WFile struct {
	w      *Writer
	ino    uint32
	gen    uint32 // the inode's generation when opened
	name   string
	off    int64
	closed bool
}

// record reads the file's inode, failing (fs.ErrNotExist) when it was
// removed since Create, or freed and reused for another file. Callers hold
// w.mu.
func (f *WFile) record(op string) ([]byte, error) {
	raw, err := f.w.m.readRawInode(f.ino)
	if err != nil {
		return nil, fspath.PathError(op, f.name, err)
	}
	if rawLinks(raw) == 0 || rawMode(raw)&sIFMT != sIFREG || binary.LittleEndian.Uint32(raw[inoGeneration:]) != f.gen {
		return nil, fspath.PathError(op, f.name, fmt.Errorf("%w: the file was removed", fs.ErrNotExist))
	}
	return raw, nil
}

func (f *WFile) check(op string) error {
	if f.closed {
		return fspath.PathError(op, f.name, fs.ErrClosed)
	}
	return nil
}

// WriteAt writes p at off, growing the file as needed; a gap between the
// old end and off is a hole.
func (f *WFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.check("write"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, fspath.PathError("write", f.name, fs.ErrInvalid)
	}
	w := f.w
	w.lock()
	defer w.mu.Unlock()
	raw, err := f.record("write")
	if err != nil {
		return 0, err
	}
	fm, err := w.loadMap(f.ino, raw)
	if err == nil {
		err = w.writeData(f.ino, raw, fm, p, off)
	}
	if err == nil {
		if end := off + int64(len(p)); end > rawSize(raw) {
			w.setSize(raw, end)
		}
		now := w.opTime
		setTime(raw, 0x10, 0x88, now)
		setTime(raw, 0xC, 0x84, now)
		err = w.writeInode(f.ino, raw)
	}
	if err = w.done("write", f.name, err); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Write writes at the file's offset.
func (f *WFile) Write(p []byte) (int, error) {
	n, err := f.WriteAt(p, f.off)
	f.off += int64(n)
	return n, err
}

// Truncate sets the file's size.
func (f *WFile) Truncate(size int64) error {
	if err := f.check("truncate"); err != nil {
		return err
	}
	if size < 0 {
		return fspath.PathError("truncate", f.name, fs.ErrInvalid)
	}
	w := f.w
	w.lock()
	defer w.mu.Unlock()
	raw, err := f.record("truncate")
	if err != nil {
		return err
	}
	fm, err := w.loadMap(f.ino, raw)
	if err == nil {
		err = w.truncate(f.ino, raw, fm, size)
	}
	if err == nil {
		now := w.opTime
		setTime(raw, 0x10, 0x88, now)
		setTime(raw, 0xC, 0x84, now)
		err = w.writeInode(f.ino, raw)
	}
	return w.done("truncate", f.name, err)
}

// ReadAt reads the file's current content.
func (f *WFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.check("read"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, fspath.PathError("read", f.name, fs.ErrInvalid)
	}
	w := f.w
	w.lock()
	defer w.mu.Unlock()
	if _, err := f.record("read"); err != nil {
		return 0, err
	}
	in, err := w.readInode(f.ino)
	if err != nil {
		return 0, fspath.PathError("read", f.name, err)
	}
	if off >= in.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), in.size-off)
	if err := w.readData(in, nil, p[:n], off); err != nil {
		return 0, fspath.PathError("read", f.name, err)
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// Read reads from the file's offset.
func (f *WFile) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.off)
	f.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// Seek sets the offset of Read and Write.
func (f *WFile) Seek(offset int64, whence int) (int64, error) {
	if err := f.check("seek"); err != nil {
		return 0, err
	}
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		fi, err := f.Stat()
		if err != nil {
			return 0, err
		}
		offset += fi.Size()
	default:
		return 0, fspath.PathError("seek", f.name, fs.ErrInvalid)
	}
	if offset < 0 {
		return 0, fspath.PathError("seek", f.name, fs.ErrInvalid)
	}
	f.off = offset
	return offset, nil
}

// Stat describes the file as it is now.
func (f *WFile) Stat() (fs.FileInfo, error) {
	if err := f.check("stat"); err != nil {
		return nil, err
	}
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	in, err := f.w.readInode(f.ino)
	if err != nil {
		return nil, fspath.PathError("stat", f.name, err)
	}
	return &FileInfo{name: baseName(f.name), in: in}, nil
}

// Sync syncs the filesystem (nothing of the file is held back).
func (f *WFile) Sync() error {
	if err := f.check("sync"); err != nil {
		return err
	}
	return f.w.Sync()
}

// Close closes the file.
func (f *WFile) Close() error {
	if err := f.check("close"); err != nil {
		return err
	}
	f.closed = true
	return nil
}
