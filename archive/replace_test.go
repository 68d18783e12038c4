package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Compact the Windows way (close, rename, open again) on any system: the
// archive reads and writes on with the compacted file, stays locked, and a
// member opened before gets an error rather than other bytes.
func TestCompactByReopening(t *testing.T) {
	defer func(v bool) { replaceByReopening = v }(replaceByReopening)
	replaceByReopening = true

	a, path := newTestArchive(t, nil)
	want := map[string][]byte{}
	for i := 0; i < 30; i++ {
		name := fmt.Sprintf("m%02d", i)
		want[name] = content(uint64(i), 1000+100*i)
		mustAdd(t, a, name, want[name])
	}
	mustCommit(t, a)
	for i := 0; i < 30; i += 3 {
		name := fmt.Sprintf("m%02d", i)
		if err := a.Remove(name); err != nil {
			t.Fatal(err)
		}
		delete(want, name)
	}
	mustCommit(t, a)
	before, err := a.Open("m01")
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.Compact(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Members != len(want) || st.BytesAfter >= st.BytesBefore {
		t.Fatalf("compacted: %+v", st)
	}
	if _, err := io.ReadAll(before); err == nil {
		t.Fatal("a member opened before the compaction read on from a closed file")
	}
	mustAdd(t, a, "after", []byte("added after compacting"))
	mustCommit(t, a)
	want["after"] = []byte("added after compacting")
	check := func(ar *Archive) {
		t.Helper()
		if n := len(ar.List()); n != len(want) {
			t.Fatalf("%d members, want %d", n, len(want))
		}
		for name, w := range want {
			got, err := ar.ReadFile(name)
			if err != nil || !bytes.Equal(got, w) {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	check(a)
	// Still the one writer (where the system has file locks).
	b, err := Open(context.Background(), path, testKey, nil)
	if err == nil {
		b.Close()
	}
	if hasLocks := runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "windows"; hasLocks && !errors.Is(err, ErrLocked) {
		t.Fatalf("a second writer could open the compacted archive: %v", err)
	}
	a = reopen(t, a, path, true)
	check(a)
	a.Close()
	// No temporary file is left beside the archive.
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("%d files beside the archive", len(entries)-1)
	}
}
