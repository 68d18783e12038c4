package keep

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// newVolume creates a real VeraCrypt container of 1 MiB (a low PIM, so
// that the key derivation is quick), writes a known sector into it and
// returns its absolute path and its credentials.
func newVolume(t *testing.T) (string, volume.Credentials, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "v.hc")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 1<<20); err != nil {
		t.Fatal(err)
	}
	dev, err := volume.OpenNewDevice(path)
	if err != nil {
		t.Fatal(err)
	}
	creds := volume.Credentials{Password: []byte("keep test"), PIM: 1}
	cr, err := tcrypt.Create(context.Background(), dev, creds, tcrypt.CreateOptions{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	v, err := volume.New(dev, cr.Unlocked, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("kept"), 128)
	if _, err := v.WriteAt(data, 4096); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	dev.Close()
	return path, creds, data
}

// keepVolume opens path with creds and keeps it in st for an hour.
func keepVolume(t *testing.T, st Store, path string, creds volume.Credentials) {
	t.Helper()
	v, err := volume.OpenWith(context.Background(), path, creds, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	snap, err := v.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Wipe()
	if err := Keep(st, path, v, snap, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
}

// TestKeptVolume keeps a real volume, looks it up, reopens it without
// credentials, extends it and locks it by path.
func TestKeptVolume(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			path, creds, data := newVolume(t)
			keepVolume(t, st, path, creds)
			if e := Lookup(st, path, Want{Hidden: true}); e != nil {
				t.Fatal("a normal volume's entry served --hidden")
			}
			e := Lookup(st, path, Want{})
			if e == nil {
				t.Fatal("no entry for the kept volume")
			}
			defer e.Wipe()
			if e.Volume != path || e.Format != "veracrypt" || e.Hidden {
				t.Fatalf("entry %+v", e)
			}
			if _, err := e.Reopen(context.Background(), st, path, Want{ProtectHidden: true}, volume.Options{ReadOnly: true}); !errors.Is(err, ErrNotFound) {
				t.Fatalf("reopen for --protect-hidden without protection: %v", err)
			}
			v, err := e.Reopen(context.Background(), st, path, Want{}, volume.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(data))
			_, err = v.ReadAt(got, 4096)
			v.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("reopened volume reads %q, %v", got[:8], err)
			}
			later := time.Now().Add(2 * time.Hour).Round(time.Second)
			if err := Extend(st, e, path, later); err != nil {
				t.Fatal(err)
			}
			if e2 := Lookup(st, path, Want{}); e2 == nil || !e2.Expires.Equal(later) {
				t.Fatalf("after Extend: %+v, want expiry %v", e2, later)
			} else {
				e2.Wipe()
			}
			if ok, err := Lock(st, path); !ok || err != nil {
				t.Fatalf("lock: %v %v", ok, err)
			}
			if ok, err := Lock(st, path); ok || err != nil {
				t.Fatalf("second lock: %v %v", ok, err)
			}
		})
	}
}

// TestKeptVolumeReplaced: a volume given a new header is not reopened
// from its entry, which goes; a volume whose file is gone is locked by
// the path it was kept under.
func TestKeptVolumeReplaced(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			// Both are kept at once: the agent ends when it holds nothing.
			path, creds, _ := newVolume(t)
			keepVolume(t, st, path, creds)
			gone, goneCreds, _ := newVolume(t)
			keepVolume(t, st, gone, goneCreds)
			if err := os.Remove(gone); err != nil {
				t.Fatal(err)
			}
			if ok, err := Lock(st, gone); !ok || err != nil {
				t.Fatalf("lock of a removed file: %v %v", ok, err)
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.WriteAt(bytes.Repeat([]byte{0x5a}, 512), 0)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			e := Lookup(st, path, Want{})
			if e == nil {
				t.Fatal("no entry for the kept volume")
			}
			defer e.Wipe()
			if err := Extend(st, e, path, time.Now().Add(time.Hour)); err == nil {
				t.Fatal("Extend accepted a file with a new header")
			}
			if _, err := e.Reopen(context.Background(), st, path, Want{}, volume.Options{ReadOnly: true}); !errors.Is(err, volume.ErrNotSameVolume) {
				t.Fatalf("reopen after a new header: %v", err)
			}
			if e := Lookup(st, path, Want{}); e != nil {
				t.Fatal("the entry of a replaced volume is still there")
			}

		})
	}
}
