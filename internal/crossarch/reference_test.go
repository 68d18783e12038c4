package crossarch

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/cryptvol/cryptvol/fat"
)

// The reference image of a data area is built from its name alone: the
// whole area filled from a seeded stream, then a FAT filesystem with a
// fixed serial number, label and clock, a directory tree and two files.
// Building it on any architecture must give the same bytes, so the side
// that opens a volume rebuilds the image in memory and compares.

type device interface {
	io.ReaderAt
	io.WriterAt
}

var refTime = time.Date(2024, 2, 29, 13, 37, 42, 0, time.UTC)

func refSerial(name string) uint32 {
	s := sha256.Sum256([]byte(name))
	return binary.BigEndian.Uint32(s[:])
}

type refFile struct {
	path string
	data []byte
}

func refFiles(name string) []refFile {
	big := make([]byte, 200<<10+123)
	seededRand(name + " file").Read(big)
	return []refFile{
		{"/README.TXT", []byte("written on one architecture, read on another: " + name + "\n")},
		{"/Sub Dir/deeper/Data file with a long name.bin", big},
	}
}

// writeReference writes the reference image of name over dev, which is
// size bytes long.
func writeReference(dev interface {
	device
	Size() int64
}, name string) error {
	size := dev.Size()
	fill := make([]byte, size)
	seededRand(name + " fill").Read(fill)
	if _, err := dev.WriteAt(fill, 0); err != nil {
		return err
	}
	if err := fat.Format(dev, size, fat.FormatOptions{Label: "CROSSARCH", Serial: refSerial(name), Now: refTime}); err != nil {
		return fmt.Errorf("format: %w", err)
	}
	fs, err := fat.OpenWithOptions(dev, size, fat.Options{Location: time.UTC, Now: func() time.Time { return refTime }})
	if err != nil {
		return err
	}
	if err := fs.MkdirAll("/Sub Dir/deeper"); err != nil {
		fs.Close()
		return err
	}
	for _, f := range refFiles(name) {
		if err := fs.WriteFile(f.path, f.data, 0o644); err != nil {
			fs.Close()
			return err
		}
	}
	return fs.Close()
}

// memDevice is a data area in memory.
type memDevice []byte

func (m memDevice) Size() int64 { return int64(len(m)) }

func (m memDevice) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m)) {
		return 0, io.EOF
	}
	n := copy(p, m[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m memDevice) WriteAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > int64(len(m)) {
		return 0, fmt.Errorf("write past the end: %d+%d > %d", off, len(p), len(m))
	}
	return copy(m[off:], p), nil
}

func reference(name string, size int64) (memDevice, error) {
	m := make(memDevice, size)
	return m, writeReference(m, name)
}

// referenceUsedEnd is where the reference filesystem's last used cluster
// ends, relative to the data area.
func referenceUsedEnd(name string, size int64) (int64, error) {
	m, err := reference(name, size)
	if err != nil {
		return 0, err
	}
	fs, err := fat.Open(m, size)
	if err != nil {
		return 0, err
	}
	defer fs.Close()
	return fs.UsedEnd(), nil
}

// checkReference compares the first limit bytes of v with the reference
// image of name, then reads the files back through the FAT filesystem.
func checkReference(v interface {
	io.ReaderAt
	Size() int64
}, name string, limit int64) error {
	want, err := reference(name, v.Size())
	if err != nil {
		return fmt.Errorf("building the reference image: %w", err)
	}
	got := make([]byte, limit)
	if _, err := v.ReadAt(got, 0); err != nil {
		return fmt.Errorf("reading the data area: %w", err)
	}
	if !bytes.Equal(got, want[:limit]) {
		i := 0
		for got[i] == want[i] {
			i++
		}
		return fmt.Errorf("data area differs from the reference image from byte %d of %d on", i, limit)
	}
	fs, err := fat.OpenWithOptions(v, v.Size(), fat.Options{ReadOnly: true, Location: time.UTC})
	if err != nil {
		return fmt.Errorf("FAT: %w", err)
	}
	defer fs.Close()
	if fs.Serial() != refSerial(name) || fs.Label() != "CROSSARCH" {
		return fmt.Errorf("FAT serial %08X label %q, want %08X %q", fs.Serial(), fs.Label(), refSerial(name), "CROSSARCH")
	}
	for _, f := range refFiles(name) {
		b, err := fs.ReadFile(f.path)
		if err != nil {
			return fmt.Errorf("FAT: %w", err)
		}
		if !bytes.Equal(b, f.data) {
			return fmt.Errorf("FAT: %s differs", f.path)
		}
		st, err := fs.Stat(f.path)
		if err != nil {
			return err
		}
		if !st.ModTime().Equal(refTime) {
			return fmt.Errorf("FAT: %s modified %v, want %v", f.path, st.ModTime(), refTime)
		}
	}
	return nil
}
