package volume_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// rawFile is a container opened without the lock, as a program that
// takes none (VeraCrypt, dd) opens it.
type rawFile struct {
	*os.File
	size int64
}

func (r *rawFile) Size() int64 { return r.size }

func openRaw(t *testing.T, p string) *rawFile {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fi, _ := f.Stat()
	return &rawFile{f, fi.Size()}
}

var testCreds = volume.Credentials{Password: []byte("lock test"), PIM: 1}

// newContainer creates a volume of the format at a new path (quick, cheap
// key derivations) and returns the path and the options that open it fast.
func newContainer(t *testing.T, format string) (string, volume.Options) {
	t.Helper()
	t.Setenv("CRYPTVOL_RUNTIME_DIR", filepath.Join(t.TempDir(), "run"))
	p := filepath.Join(t.TempDir(), "vol")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 20<<20); err != nil {
		t.Fatal(err)
	}
	raw := openRaw(t, p)
	switch format {
	case "veracrypt":
		if _, err := tcrypt.Create(context.Background(), raw, testCreds, tcrypt.CreateOptions{Quick: true, Hash: "SHA-512"}); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		return p, volume.Options{Hash: "SHA-512", Encryption: "AES"}
	default:
		o := luks.CreateOptions{Type: format, KDF: luks.KDFOptions{PBKDF: "pbkdf2", Iterations: 1000}, Quick: true}
		if _, err := luks.Create(context.Background(), raw, o, testCreds); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		return p, volume.Options{}
	}
}

func open(p string, o volume.Options, readOnly bool) (*volume.Volume, error) {
	o.ReadOnly = readOnly
	return volume.OpenWith(context.Background(), p, testCreds, o)
}

// TestOpenLocksTheContainer: a read-write open excludes every other open
// of the container, readers share it, and the refusal names the holder
// and comes before any key derivation.
func TestOpenLocksTheContainer(t *testing.T) {
	p, o := newContainer(t, "veracrypt")
	volume.SetLockHolder("cryptvol put", "")
	defer volume.SetLockHolder("", "")
	w, err := open(p, o, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{true, false} {
		_, err := open(p, o, ro)
		var le *volume.LockedError
		if !errors.Is(err, volume.ErrLocked) || !errors.As(err, &le) {
			t.Fatalf("second open (read-only %v) while written: %v", ro, err)
		}
		want := fmt.Sprintf("is being written by cryptvol put (PID %d)", os.Getpid())
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if _, err := volume.OpenDevice(p, true); !errors.Is(err, volume.ErrLocked) {
		t.Errorf("OpenDevice while written: %v", err)
	}
	w.Close()

	volume.SetLockHolder("cryptvol ls", "")
	r1, err := open(p, o, true)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := open(p, o, true)
	if err != nil {
		t.Fatalf("two readers: %v", err)
	}
	if _, err := open(p, o, false); !errors.Is(err, volume.ErrLocked) || !strings.Contains(err.Error(), "is being read by cryptvol ls") {
		t.Errorf("writer while read: %v", err)
	}
	r1.Close()
	r2.Close()
	w, err = open(p, o, false)
	if err != nil {
		t.Fatalf("writer after the readers closed: %v", err)
	}
	w.Close()
}

// TestWritesStopWhenTheHeaderChanges: a program that rewrites the header
// behind the lock (another machine, VeraCrypt) makes the volume refuse to
// write: before its first write, and from the Sync that sees it on.
func TestWritesStopWhenTheHeaderChanges(t *testing.T) {
	for _, format := range []string{"veracrypt", "luks1", "luks2"} {
		t.Run(format, func(t *testing.T) {
			p, o := newContainer(t, format)
			other := openRaw(t, p)
			junk := bytes.Repeat([]byte{0xA5}, 64)

			// Changed before the first write: nothing is written.
			v, err := open(p, o, false)
			if err != nil {
				t.Fatal(err)
			}
			saved := make([]byte, 64)
			other.ReadAt(saved, 128)
			other.WriteAt(junk, 128)
			before, _ := os.ReadFile(p)
			if _, err := v.WriteAt(make([]byte, 4096), 0); !errors.Is(err, volume.ErrHeaderChanged) {
				t.Fatalf("first write after the header changed: %v", err)
			}
			if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
				t.Error("the refused write changed the container")
			}
			if err := v.Close(); err != nil {
				t.Errorf("Close after a refused write: %v", err)
			}
			other.WriteAt(saved, 128)

			// Changed after some writes: Sync says so, later writes fail.
			v, err = open(p, o, false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.WriteAt([]byte("data"), 0); err != nil {
				t.Fatal(err)
			}
			if err := v.Sync(); err != nil {
				t.Fatalf("Sync with the header unchanged: %v", err)
			}
			other.WriteAt(junk, 128)
			if err := v.Sync(); !errors.Is(err, volume.ErrHeaderChanged) {
				t.Errorf("Sync after the header changed: %v", err)
			}
			if _, err := v.WriteAt([]byte("more"), 0); !errors.Is(err, volume.ErrHeaderChanged) {
				t.Errorf("write after the change was seen: %v", err)
			}
			if err := v.Close(); !errors.Is(err, volume.ErrHeaderChanged) {
				t.Errorf("Close: %v", err)
			}
		})
	}
}
