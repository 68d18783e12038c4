package filesystem_test

import (
	"bytes"
	"errors"
	"io/fs"
	"testing"

	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/filesystem"
)

type memDev struct{ b []byte }

func (m *memDev) ReadAt(p []byte, off int64) (int, error)  { return copy(p, m.b[off:]), nil }
func (m *memDev) WriteAt(p []byte, off int64) (int, error) { return copy(m.b[off:], p), nil }

// TestFATBehindTheInterface writes through filesystem.Writer on FAT, reads
// back through FS, and checks the error contract: sentinels of io/fs and of
// this package, and ErrReadOnly when opened read-only.
func TestFATBehindTheInterface(t *testing.T) {
	dev := &memDev{make([]byte, 4<<20)}
	if err := fat.Format(dev, 4<<20, fat.FormatOptions{Label: "IFACE", Serial: 0xDEADBABE}); err != nil {
		t.Fatal(err)
	}
	fsys, err := filesystem.Open(dev, 4<<20, filesystem.Options{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	w, ok := fsys.(filesystem.Writer)
	if !ok {
		t.Fatal("FAT opened writable is not a Writer")
	}
	if fsys.Type() != "vfat" || fsys.Version() != "FAT12" || fsys.Label() != "IFACE" || fsys.ID() != "DEAD-BABE" {
		t.Errorf("type %q %q label %q id %q", fsys.Type(), fsys.Version(), fsys.Label(), fsys.ID())
	}
	if err := w.Mkdir("/dir"); err != nil {
		t.Fatal(err)
	}
	f, err := w.Create("/dir/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("through the interface"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := readAll(fsys, "dir/a.txt"); err != nil || string(b) != "through the interface" {
		t.Errorf("read back %q, %v", b, err)
	}
	if _, err := fsys.Stat("/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a missing name: %v", err)
	}
	if _, err := fsys.Readlink("/dir/a.txt"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Readlink on FAT: %v", err)
	}
	big := bytes.Repeat([]byte("x"), 5<<20)
	g, _ := w.Create("/big")
	if _, err := g.Write(big); !errors.Is(err, filesystem.ErrNoSpace) || !errors.Is(err, fat.ErrNoSpace) {
		t.Errorf("writing past the end: %v, want ErrNoSpace (both packages')", err)
	}
	g.Close()
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := filesystem.Open(dev, 4<<20, filesystem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.(filesystem.Writer).Mkdir("/x"); !errors.Is(err, filesystem.ErrReadOnly) {
		t.Errorf("Mkdir read-only: %v, want ErrReadOnly", err)
	}
	if _, err := filesystem.Open(&memDev{make([]byte, 1<<20)}, 1<<20, filesystem.Options{}); !errors.Is(err, filesystem.ErrUnknown) {
		t.Errorf("zeros: %v, want ErrUnknown", err)
	}
}
