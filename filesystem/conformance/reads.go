package conformance

import (
	"bytes"
	"io/fs"
	"sort"
	"testing"
	"testing/fstest"

	"github.com/cryptvol/cryptvol/filesystem"
)

// TestReads runs testing/fstest.TestFS on fsys (through IOFS) and checks
// that every file of want (io/fs names: "a/b.txt") holds exactly its
// content. want must list at least one file, so that an empty or
// unreadable filesystem cannot pass.
func TestReads(t *testing.T, fsys filesystem.FS, want map[string]string) {
	t.Helper()
	TestReadsIOFS(t, IOFS(fsys), want)
}

// TestReadsIOFS is TestReads on an io/fs.FS (os.DirFS of a mount).
func TestReadsIOFS(t *testing.T, fsys fs.FS, want map[string]string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("conformance.TestReads needs expected files")
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	if err := fstest.TestFS(fsys, names...); err != nil {
		t.Errorf("testing/fstest.TestFS: %v", err)
	}
	for _, n := range names {
		got, err := fs.ReadFile(fsys, n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if !bytes.Equal(got, []byte(want[n])) {
			t.Errorf("%s: %d bytes read, want %d (%.40q, want %.40q)", n, len(got), len(want[n]), got, want[n])
		}
	}
}
