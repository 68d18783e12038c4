package ext4

import (
	"io"
	"io/fs"
	"sort"

	"github.com/cryptvol/cryptvol/internal/fspath"
)

// File is an open file. ReadAt is safe for concurrent use; Read and Seek
// share an offset.
type File struct {
	fs     *FS
	name   string
	info   *FileInfo
	runs   []run  // regular files: the block map, built at Open
	inline []byte // regular inline-data files: the content
	off    int64
	closed bool
}

// Stat describes the open file.
func (f *File) Stat() (fs.FileInfo, error) { return f.info, nil }

// Close closes the file.
func (f *File) Close() error {
	if f.closed {
		return fspath.PathError("close", f.name, fs.ErrClosed)
	}
	f.closed = true
	return nil
}

// ReadAt reads len(p) bytes from off; it returns io.EOF when fewer remain.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if f.closed {
		return 0, fspath.PathError("read", f.name, fs.ErrClosed)
	}
	if f.info.in.isDir() {
		return 0, fspath.PathError("read", f.name, fspath.ErrIsDir)
	}
	if off < 0 {
		return 0, fspath.PathError("read", f.name, fs.ErrInvalid)
	}
	size := f.info.in.size
	if off >= size {
		return 0, io.EOF
	}
	n := len(p)
	if int64(n) > size-off {
		n = int(size - off)
	}
	if f.inline != nil {
		copy(p, f.inline[off:off+int64(n)])
	} else if err := f.fs.readData(f.info.in, f.runs, p[:n], off); err != nil {
		return 0, fspath.PathError("read", f.name, err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Read reads from the current offset.
func (f *File) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.off)
	f.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// Seek sets the offset for the next Read.
func (f *File) Seek(offset int64, whence int) (int64, error) {
	if f.closed {
		return 0, fspath.PathError("seek", f.name, fs.ErrClosed)
	}
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += f.info.in.size
	default:
		return 0, fspath.PathError("seek", f.name, fs.ErrInvalid)
	}
	if offset < 0 {
		return 0, fspath.PathError("seek", f.name, fs.ErrInvalid)
	}
	f.off = offset
	return offset, nil
}

// readData fills p with the file's bytes from off (inside its size): one
// device read per contiguous run, zeros for holes and unwritten extents.
// runs may be nil, and is then built here (callers then hold f.mu).
func (f *FS) readData(in *inode, runs []run, p []byte, off int64) error {
	if in.flags&flagInlineData != 0 {
		data, err := in.inlineContent()
		if err != nil {
			return err
		}
		copy(p, data[off:])
		return nil
	}
	if runs == nil {
		var err error
		if runs, err = f.blockMap(in); err != nil {
			return err
		}
	}
	bs := f.blockSize
	// First run that ends after off's block.
	blk := uint64(off / bs)
	i := sort.Search(len(runs), func(i int) bool { return runs[i].logical+runs[i].length > blk })
	for len(p) > 0 {
		blk := uint64(off / bs)
		if i >= len(runs) || runs[i].logical > blk {
			// A hole up to the next run (or the end).
			end := int64(len(p))
			if i < len(runs) {
				end = min(end, int64(runs[i].logical)*bs-off)
			}
			clear(p[:end])
			p, off = p[end:], off+end
			continue
		}
		r := runs[i]
		runEnd := int64(r.logical+r.length) * bs
		n := min(int64(len(p)), runEnd-off)
		if r.unwritten {
			clear(p[:n])
		} else {
			dev := int64(r.phys)*bs + (off - int64(r.logical)*bs)
			if err := f.readAt(p[:n], dev, uint64(dev/bs)); err != nil {
				return err
			}
		}
		p, off = p[n:], off+n
		i++
	}
	return nil
}
