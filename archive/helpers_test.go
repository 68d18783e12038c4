package archive

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// testKey is a key file's contents: the fastest credentials, so tests spend
// their time on the format rather than on Argon2.
var testKey = Credentials{KeyFile: bytes.Repeat([]byte("k"), 32)}

// testArgon2 keeps password tests quick; the format does not care.
var testArgon2 = Argon2Params{MemoryKiB: 64, Passes: 1, Lanes: 1}

func newTestArchive(t testing.TB, o *CreateOptions) (*Archive, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "a.cva")
	if o == nil {
		o = &CreateOptions{NoSync: true}
	}
	a, err := Create(context.Background(), path, testKey, o)
	if err != nil {
		t.Fatal(err)
	}
	return a, path
}

func reopen(t testing.TB, a *Archive, path string, ro bool) *Archive {
	t.Helper()
	if a != nil {
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Open(context.Background(), path, testKey, &OpenOptions{ReadOnly: ro, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// content is deterministic pseudo-random data for member i.
func content(seed uint64, n int) []byte {
	r := rand.New(rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24), 1}))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

var testTime = time.Date(2024, 2, 29, 12, 34, 56, 789, time.UTC)

// onHost is what the host's filesystem keeps of a mode and a time set on
// a local file: Windows keeps no Unix permissions (a writable file is
// 0666, a directory 0777) and NTFS keeps times to 100 ns.
func onHost(mode fs.FileMode, t time.Time) (fs.FileMode, time.Time) {
	if runtime.GOOS != "windows" {
		return mode, t
	}
	perm := fs.FileMode(0o666)
	if mode.IsDir() {
		perm = 0o777
	}
	return mode&^fs.ModePerm | perm, t.Truncate(100 * time.Nanosecond)
}

func fileInfo() Info { return Info{ModTime: testTime, Mode: 0o640} }

func mustAdd(t testing.TB, a *Archive, name string, data []byte) {
	t.Helper()
	if err := a.Add(name, bytes.NewReader(data), fileInfo(), nil); err != nil {
		t.Fatal(err)
	}
}

func mustCommit(t testing.TB, a *Archive) {
	t.Helper()
	if err := a.Commit(); err != nil {
		t.Fatal(err)
	}
}

// damageMember closes a and flips a bit in the middle of member name's
// stored bytes in the file at path, so that it no longer authenticates;
// it returns the member's stored size.
func damageMember(t testing.TB, a *Archive, path, name string) int64 {
	t.Helper()
	pos := a.idx.findString(name)
	off, size := a.idx.ents[pos].offset, a.idx.ents[pos].size
	a.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[off+size/2] ^= 0x40
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return int64(size)
}

// checkContents asserts the archive holds exactly want (name -> contents).
func checkContents(t testing.TB, a *Archive, want map[string][]byte) {
	t.Helper()
	list := a.List()
	if len(list) != len(want) || a.Len() != len(want) {
		t.Fatalf("archive lists %d members (Len %d), want %d", len(list), a.Len(), len(want))
	}
	for _, e := range list {
		w, ok := want[e.Name]
		if !ok {
			t.Fatalf("unexpected member %q", e.Name)
		}
		got, err := a.ReadFile(e.Name)
		if err != nil {
			t.Fatalf("ReadFile(%q): %v", e.Name, err)
		}
		if !bytes.Equal(got, w) || e.Size != int64(len(w)) {
			t.Fatalf("member %q: %d bytes (size %d), want %d bytes", e.Name, len(got), e.Size, len(w))
		}
	}
}

func name(i int) string { return fmt.Sprintf("thumbs/%03d/img-%06d.jpg", i%1000, i) }
