package tcrypt

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// snapshotOf opens path and returns its snapshot, through its encoding.
func snapshotOf(t *testing.T, path string, c volume.Credentials, o volume.Options) (*volume.Snapshot, []byte) {
	t.Helper()
	o.ReadOnly = true
	v, err := volume.OpenWith(context.Background(), path, c, o)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	s, err := v.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back volume.Snapshot
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, c.Password) {
		t.Fatal("the snapshot holds the password")
	}
	return &back, v.MasterKey()
}

// TestSnapshotReopen keeps a corpus volume's unlock and reopens it without
// the password: same data and header facts, writes through it keep it
// valid; a copy of the file, another volume written over it or put in its
// place, and a new password are refused.
func TestSnapshotReopen(t *testing.T) {
	im := imageByName(t, "vc_1-sha512-xts-aes")
	path := testdata.CopyFile(t, im.Path)
	creds := volume.Credentials{Password: []byte(im.Password)}
	snap, key := snapshotOf(t, path, creds, volume.Options{Hash: "sha512"})

	v, err := volume.Reopen(context.Background(), path, snap, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := serialOf(t, v); got != "DEAD-BABE" {
		t.Fatalf("serial %q", got)
	}
	if v.Info().Hash != "SHA-512" || v.Info().Encryption != "AES" || !bytes.Equal(v.MasterKey(), key) {
		t.Fatalf("reopened info %+v", v.Info())
	}
	// Writing into the data area leaves the identity as it is.
	if _, err := v.WriteAt([]byte("written while unlocked"), v.Size()-4096); err != nil {
		t.Fatal(err)
	}
	v.Close()
	v, err = volume.Reopen(context.Background(), path, snap, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("after a write: %v", err)
	}
	got := make([]byte, 22)
	v.ReadAt(got, v.Size()-4096)
	v.Close()
	if string(got) != "written while unlocked" {
		t.Fatalf("read back %q", got)
	}
	// And the password still opens what was written.
	pv, err := volume.OpenWith(context.Background(), path, creds, volume.Options{ReadOnly: true, Hash: "sha512"})
	if err != nil {
		t.Fatal(err)
	}
	pv.ReadAt(got, pv.Size()-4096)
	pv.Close()
	if string(got) != "written while unlocked" {
		t.Fatalf("read back with the password %q", got)
	}

	refused := func(what, p string) {
		t.Helper()
		if v, err := volume.Reopen(context.Background(), p, snap, volume.Options{ReadOnly: true}); !errors.Is(err, volume.ErrNotSameVolume) {
			if v != nil {
				v.Close()
			}
			t.Errorf("%s: %v, want ErrNotSameVolume", what, err)
		}
	}
	refused("a copy of the file", testdata.CopyFile(t, path))

	other := testdata.CopyFile(t, imageByName(t, "vc_1-sha256-xts-aes").Path)
	moved := filepath.Join(t.TempDir(), "moved.hc")
	os.Rename(path, moved)
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	refused("another volume renamed into its place", path)
	os.Rename(moved, path)

	// Another volume's bytes written into the same file (same inode).
	b, err := os.ReadFile(imageByName(t, "vc_1-sha256-xts-aes").Path)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(path)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	refused("another volume written over the file", path)
	os.WriteFile(path, orig, 0o600)
	if v, err := volume.Reopen(context.Background(), path, snap, volume.Options{ReadOnly: true}); err != nil {
		t.Fatalf("the original bytes back: %v", err)
	} else {
		v.Close()
	}

	dev, err := volume.OpenDevice(path, false)
	if err != nil {
		t.Fatal(err)
	}
	err = ChangeCredentials(context.Background(), dev, creds, volume.Credentials{Password: []byte("a new password")}, ChangeOptions{Open: volume.Options{Hash: "sha512"}})
	dev.Close()
	if err != nil {
		t.Fatal(err)
	}
	refused("a new password", path)
}

// TestSnapshotHidden keeps a hidden volume's unlock: the outer volume's
// writes do not touch what binds it.
func TestSnapshotHidden(t *testing.T) {
	dev, outer, hidden, data := createdHidden(t)
	path := dev.Name()
	dev.Close() // the opens below take the volume lock
	snap, _ := snapshotOf(t, path, hidden, volume.Options{})
	if !snap.Info.Hidden {
		t.Fatal("not the hidden volume")
	}
	ov, err := volume.OpenWith(context.Background(), path, outer, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ov.WriteAt(make([]byte, 64<<10), 0)
	ov.Close()
	hv, err := volume.Reopen(context.Background(), path, snap, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer hv.Close()
	if !bytes.Equal(readAll(t, hv), data) || !hv.Info().Hidden {
		t.Fatal("the reopened hidden volume reads other data")
	}
}

// TestSnapshotEncoding rejects truncated and altered encodings.
func TestSnapshotEncoding(t *testing.T) {
	dev, outer, _, _ := createdHidden(t)
	dev.Close() // snapshotOf opens it by path, taking the volume lock
	snap, _ := snapshotOf(t, dev.Name(), outer, volume.Options{})
	b, _ := snap.MarshalBinary()
	for _, bad := range [][]byte{nil, b[:len(b)-1], append(append([]byte(nil), b...), 0), b[5:]} {
		var s volume.Snapshot
		if err := s.UnmarshalBinary(bad); err == nil {
			t.Errorf("decoded a %d-byte mangled snapshot", len(bad))
		}
	}
}
