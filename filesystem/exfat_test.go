package filesystem_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/exfat"
	"github.com/cryptvol/cryptvol/filesystem"
)

// TestExFATBehindTheInterface writes through filesystem.Writer on exFAT,
// reads back through FS, checks the error contract (sentinels of io/fs,
// of this package and of exfat; ErrReadOnly when opened read-only), and
// has fsck.exfat check the result where it is installed.
func TestExFATBehindTheInterface(t *testing.T) {
	const size = 8 << 20
	dev := &memDev{make([]byte, size)}
	if err := exfat.Format(dev, size, exfat.FormatOptions{Label: "IFACE", Serial: 0xDEADBABE}); err != nil {
		t.Fatal(err)
	}
	fsys, err := filesystem.Open(dev, size, filesystem.Options{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	w, ok := fsys.(filesystem.Writer)
	if !ok {
		t.Fatal("exFAT opened writable is not a Writer")
	}
	if fsys.Type() != "exfat" || fsys.Label() != "IFACE" || fsys.ID() != "DEAD-BABE" {
		t.Errorf("type %q label %q id %q", fsys.Type(), fsys.Label(), fsys.ID())
	}
	if _, ok := fsys.(filesystem.Checker); !ok || fsys.Type() != "exfat" {
		t.Error("exFAT is not a Checker, or ExFAT does not return it")
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
	if b, err := readAll(fsys, "DIR/A.TXT"); err != nil || string(b) != "through the interface" {
		t.Errorf("read back (names compare case-insensitively) %q, %v", b, err)
	}
	if err := w.Rename("/dir/a.txt", "/b.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat("/dir/a.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a renamed name: %v", err)
	}
	if _, err := fsys.Readlink("/b.txt"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Readlink on exFAT: %v", err)
	}
	if _, err := fsys.Open("/dir/a.txt/x"); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, filesystem.ErrNotDir) {
		t.Errorf("Open under a file: %v", err)
	}
	for _, n := range []int{6 << 20, 9 << 20} { // more than is free; more than the volume
		big := bytes.Repeat([]byte("x"), n)
		g, _ := w.Create("/big")
		if _, err := g.Write(big); !errors.Is(err, filesystem.ErrNoSpace) || !errors.Is(err, exfat.ErrNoSpace) && !errors.Is(err, exfat.ErrFileTooLarge) {
			t.Errorf("writing %d bytes: %v, want ErrNoSpace (and exfat's ErrNoSpace or ErrFileTooLarge)", n, err)
		}
		g.Close()
	}
	if err := w.Remove("/big"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := filesystem.Open(dev, size, filesystem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.(filesystem.Writer).Mkdir("/x"); !errors.Is(err, filesystem.ErrReadOnly) {
		t.Errorf("Mkdir read-only: %v, want ErrReadOnly", err)
	}
	if b, err := readAll(ro, "b.txt"); err != nil || string(b) != "through the interface" {
		t.Errorf("read back read-only %q, %v", b, err)
	}
	ro.Close()
	if _, err := exec.LookPath("fsck.exfat"); err != nil {
		t.Log("fsck.exfat (exfatprogs) not installed: the image is not checked by it")
		return
	}
	img := filepath.Join(t.TempDir(), "x.img")
	os.WriteFile(img, dev.b, 0o600)
	if out, err := exec.Command("fsck.exfat", "-n", img).CombinedOutput(); err != nil {
		t.Errorf("fsck.exfat -n: %v\n%s", err, out)
	}
}
