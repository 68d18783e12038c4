//go:build unix

package tcrypt

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// TestReopenFile hands an open, locked volume to "another process" the way
// cryptvol's raw-file helper gets it: a duplicate of the open file and a
// snapshot. The reopened volume reads and writes the same data area; the
// lock of the first open covers it (a new open is refused while either
// holds the file) and no lock is taken again; another file is refused.
func TestReopenFile(t *testing.T) {
	im := imageByName(t, "vc_1-sha512-xts-aes")
	path := testdata.CopyFile(t, im.Path)
	creds := volume.Credentials{Password: []byte(im.Password)}
	v, err := volume.OpenWith(context.Background(), path, creds, volume.Options{Hash: "sha512"})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := v.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Wipe()
	dup := func(f *os.File) *os.File {
		fd, err := syscall.Dup(int(f.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fd), f.Name())
	}
	r, err := volume.ReopenFile(context.Background(), dup(v.File()), snap, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := serialOf(t, r); got != "DEAD-BABE" {
		t.Fatalf("serial %q", got)
	}
	if _, err := r.WriteAt([]byte("through the handed-over file"), r.Size()-8192); err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 28)
	v.ReadAt(got, v.Size()-8192)
	if string(got) != "through the handed-over file" {
		t.Fatalf("the first open reads %q", got)
	}
	refused := func(when string) {
		t.Helper()
		o, err := volume.OpenDevice(path, true)
		if err == nil {
			o.Close()
			t.Fatalf("%s: the file opened for reading while the volume is open for writing", when)
		}
		if !errors.Is(err, volume.ErrLocked) {
			t.Fatalf("%s: %v", when, err)
		}
	}
	refused("both open")
	// The helper ends first; the command closes its volume after it.
	r.Close()
	refused("the first open alone")
	v.Close()
	o, err := volume.OpenDevice(path, true)
	if err != nil {
		t.Fatalf("after both closed: %v", err)
	}
	o.Close()

	// Another file (a copy) is not the volume of the snapshot.
	other := testdata.CopyFile(t, im.Path)
	f, err := os.OpenFile(other, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := volume.ReopenFile(context.Background(), f, snap, volume.Options{}); !errors.Is(err, volume.ErrNotSameVolume) {
		if r != nil {
			r.Close()
		}
		t.Fatalf("a copy reopened: %v", err)
	}
}
