package filesystem_test

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
)

// TestExt4WriterThroughInterface drives the in-process ext4 writer
// through filesystem.Writer, then checks the image with e2fsck -fn and
// reads it back through filesystem.Open.
func TestExt4WriterThroughInterface(t *testing.T) {
	needTool(t, "mkfs.ext4", "e2fsck")
	img := t.TempDir() + "/fs.img"
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 8<<20); err != nil {
		t.Fatal(err)
	}
	run(t, "mkfs.ext4", "-q", "-F", img)
	dev, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	w, err := filesystem.OpenExt4Writable(dev, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Mkdir("d"); err != nil {
		t.Fatal(err)
	}
	f, err := w.Create("d/a")
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("cryptvol"), 10000)
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 64<<20)); !errors.Is(err, filesystem.ErrNoSpace) {
		t.Errorf("write past the free space: %v, want filesystem.ErrNoSpace", err)
	}
	f.Close()
	if err := w.Rename("d/a", "b"); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2031, 5, 6, 7, 8, 9, 123456789, time.UTC)
	if err := w.Chtimes("b", mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove("d"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	run(t, "e2fsck", "-fn", img)
	r := openImage(t, img)
	fi, err := r.Stat("b")
	if err != nil || fi.Size() != int64(len(data)) || !fi.ModTime().Equal(mtime) {
		t.Fatalf("b: %v %v", fi, err)
	}
	if _, err := r.Stat("d"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("d: %v, want not exist", err)
	}
}
