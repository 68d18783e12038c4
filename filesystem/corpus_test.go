package filesystem_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
)

// TestCorpusExt4 reads cryptsetup's img_fs_ext4.img, a real ext4 image
// from 2013 without metadata_csum (which go-diskfs cannot open: see
// ext4/EVALUATION.md): every file debugfs lists must be listed, and its
// content must be what debugfs dumps.
func TestCorpusExt4(t *testing.T) {
	needTool(t, "debugfs")
	img := testdata.Unpack(t, "img_fs_ext4.img.xz")
	fsys := openImage(t, img)
	if fsys.Type() != "ext4" {
		t.Errorf("type %q", fsys.Type())
	}
	ents, err := fsys.ReadDir("/")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	out := run(t, "debugfs", "-R", "ls -p /", img)
	var want []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Split(l, "/"); len(f) >= 7 && f[5] != "." && f[5] != ".." && f[5] != "" {
			want = append(want, f[5])
		}
	}
	sortStrings(names)
	sortStrings(want)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("root lists %v, debugfs %v", names, want)
	}
	files := 0
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		dump := filepath.Join(t.TempDir(), "dump")
		run(t, "debugfs", "-R", "dump /"+e.Name()+" "+dump, img)
		wantData, err := os.ReadFile(dump)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(fsys, e.Name())
		if err != nil || !bytes.Equal(got, wantData) {
			t.Errorf("%s: %d bytes (%v), debugfs dumps %d", e.Name(), len(got), err, len(wantData))
		}
		files++
	}
	if files == 0 {
		t.Fatal("no regular files in the corpus image")
	}
	t.Logf("%d files match debugfs: %v", files, names)
}
