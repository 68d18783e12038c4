package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tamperFixture is a small archive with live and removed members, replaced
// members, merged and superseded index segments, and a directory.
func tamperFixture(t *testing.T) ([]byte, map[string][]byte) {
	ar, path := newTestArchive(t, nil)
	want := map[string][]byte{}
	for i := 0; i < 5; i++ {
		want[name(i)] = content(uint64(i), 40+90*i)
		mustAdd(t, ar, name(i), want[name(i)])
		mustCommit(t, ar)
	}
	want[name(1)] = content(99, 33)
	if err := ar.Add(name(1), bytes.NewReader(want[name(1)]), fileInfo(), &AddOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if err := ar.Remove(name(3)); err != nil {
		t.Fatal(err)
	}
	delete(want, name(3))
	mustCommit(t, ar)
	if err := ar.Add("dir", nil, Info{Mode: 0o700 | os.ModeDir}, nil); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, ar)
	ar.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data, want
}

// Flip each byte of the file in turn: the change is always found, by Open
// or by Verify, and never goes unnoticed or panics.
func TestTamperEveryByte(t *testing.T) {
	data, want := tamperFixture(t)
	want["dir"] = nil
	ar, _, err := openMem(bytes.Clone(data), testKey)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := ar.Verify(t.Context(), nil); err != nil || !r.OK() {
		t.Fatalf("untouched fixture: %+v %v", r, err)
	}
	counts := map[string]int{}
	for i := range data {
		for _, mask := range []byte{0x01, 0x80} {
			d := bytes.Clone(data)
			d[i] ^= mask
			ar, _, err := openMem(d, testKey)
			if err != nil {
				switch {
				case errors.Is(err, ErrWrongKey):
					counts["open: wrong key"]++
				case errors.Is(err, ErrDamaged):
					counts["open: damaged"]++
				case errors.Is(err, ErrNotArchive):
					counts["open: not an archive"]++
				case errors.Is(err, ErrUnsupported):
					counts["open: unsupported"]++
				default:
					t.Fatalf("byte %d ^ %#x: open: unexpected error %v", i, mask, err)
				}
				continue
			}
			r, err := ar.Verify(t.Context(), nil)
			if err != nil {
				t.Fatalf("byte %d ^ %#x: verify: %v", i, mask, err)
			}
			if r.OK() {
				t.Fatalf("byte %d ^ %#x went unnoticed", i, mask)
			}
			if r.Tail > 0 {
				counts["verify: torn tail (newest footer)"]++
			} else {
				counts["verify: problem"]++
			}
			// Reading a live member whose record was changed fails, by
			// ReadFile and by Walk.
			ar.Walk(func(e Entry, data []byte) error {
				if !e.IsDir() && !bytes.Equal(data, want[e.Name]) {
					t.Fatalf("byte %d ^ %#x: Walk gave wrong contents of %s without an error", i, mask, e.Name)
				}
				return nil
			})
			for _, e := range ar.List() {
				got, err := ar.ReadFile(e.Name)
				if err == nil && !bytes.Equal(got, want[e.Name]) {
					t.Fatalf("byte %d ^ %#x: %s read back wrong without an error", i, mask, e.Name)
				}
			}
		}
	}
	t.Logf("%d bytes, each flipped twice: %v", len(data), counts)
}

// A record changed in place is refused on read with ErrDamaged.
func TestTamperedRecordRead(t *testing.T) {
	a, path := newTestArchive(t, nil)
	d := content(1, 3*ChunkSize+10)
	mustAdd(t, a, "m", d)
	mustCommit(t, a)
	a.Close()
	raw, _ := os.ReadFile(path)
	for _, chunk := range []int64{0, 1, 3} {
		x := bytes.Clone(raw)
		x[headerSize+StreamLen(0)+footerSize+chunk*(ChunkSize+TagSize)+5] ^= 0x20
		ar, _, err := openMem(x, testKey)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ar.ReadFile("m"); !errors.Is(err, ErrDamaged) {
			t.Fatalf("chunk %d changed: ReadFile = %v", chunk, err)
		}
	}
}

func fileDigest(t *testing.T, path string) ([32]byte, time.Time) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	return sha256.Sum256(raw), st.ModTime()
}

// A wrong password or key file is ErrWrongKey and changes nothing.
func TestWrongCredentials(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pwPath := filepath.Join(dir, "pw.cva")
	a, err := Create(ctx, pwPath, Credentials{Password: []byte("right")}, &CreateOptions{Argon2: testArgon2})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, a, "x", []byte("secret"))
	mustCommit(t, a)
	a.Close()
	kfPath := filepath.Join(dir, "kf.cva")
	a, err = Create(ctx, kfPath, testKey, &CreateOptions{Cipher: XChaCha20Poly1305})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	otherKey := Credentials{KeyFile: bytes.Repeat([]byte("j"), 32)}
	for _, c := range []struct {
		path string
		cred Credentials
	}{
		{pwPath, Credentials{Password: []byte("wrong")}},
		{pwPath, Credentials{Password: []byte("")}},
		{pwPath, testKey},
		{kfPath, otherKey},
		{kfPath, Credentials{Password: []byte("right")}},
	} {
		sum, mtime := fileDigest(t, c.path)
		for _, ro := range []bool{false, true} {
			if _, err := Open(ctx, c.path, c.cred, &OpenOptions{ReadOnly: ro}); !errors.Is(err, ErrWrongKey) {
				t.Fatalf("%s with wrong credentials: %v", filepath.Base(c.path), err)
			}
		}
		if _, err := Repair(ctx, c.path, c.cred); !errors.Is(err, ErrWrongKey) {
			t.Fatalf("Repair with wrong credentials: %v", err)
		}
		if s2, m2 := fileDigest(t, c.path); s2 != sum || !m2.Equal(mtime) {
			t.Fatal("a failed open changed the file")
		}
	}
	a, err = Open(ctx, pwPath, Credentials{Password: []byte("right")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
}

func TestNotAnArchive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	for _, content := range [][]byte{nil, []byte("short"), bytes.Repeat([]byte{0}, 4096)} {
		os.WriteFile(path, content, 0o600)
		if _, err := Open(context.Background(), path, testKey, nil); !errors.Is(err, ErrNotArchive) {
			t.Fatalf("%d bytes: %v", len(content), err)
		}
	}
}

func TestCreateRefusesExisting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	os.WriteFile(path, []byte("keep me"), 0o600)
	if _, err := Create(context.Background(), path, testKey, nil); !errors.Is(err, ErrExists) {
		t.Fatalf("Create over a file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep me" {
		t.Fatal("Create changed an existing file")
	}
}

func TestWriterLock(t *testing.T) {
	a, path := newTestArchive(t, nil)
	defer a.Close()
	if _, err := Open(context.Background(), path, testKey, nil); !errors.Is(err, ErrLocked) {
		t.Skipf("no advisory locks here: %v", err)
	}
	r, err := Open(context.Background(), path, testKey, &OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("a reader beside the writer: %v", err)
	}
	if err := r.Add("x", bytes.NewReader(nil), fileInfo(), nil); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Add on a read-only archive: %v", err)
	}
	r.Close()
}

// A file cut short under an open archive: Walk reports the members whose
// records are gone as damaged and never hands out their bytes, on one
// core and on several.
func TestWalkFileCutShort(t *testing.T) {
	a, path := newTestArchive(t, nil)
	want := map[string][]byte{}
	for i := 0; i < 40; i++ {
		name := fmt.Sprintf("f%02d", i)
		want[name] = content(uint64(i), 70<<10)
		mustAdd(t, a, name, want[name])
	}
	mustCommit(t, a)
	a.Close()
	raw, _ := os.ReadFile(path)
	for _, threads := range []int{1, 2, 4} {
		ar, mf, err := openMem(bytes.Clone(raw), testKey)
		if err != nil {
			t.Fatal(err)
		}
		ar.threads = threads
		mf.data = mf.data[:len(mf.data)/2]
		seen := 0
		err = ar.Walk(func(e Entry, data []byte) error {
			if !bytes.Equal(data, want[e.Name]) {
				t.Fatalf("threads %d: %s handed out wrong", threads, e.Name)
			}
			seen++
			return nil
		})
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "cut short") {
			t.Fatalf("threads %d: Walk over a cut file = %v", threads, err)
		}
		if seen == 0 || seen >= len(want) {
			t.Fatalf("threads %d: %d members before the cut, want some but not all", threads, seen)
		}
	}
}
