package fat

import (
	"os"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
)

// TestCorpusVFAT opens the FAT12 image from cryptsetup's test suite
// (4096-byte sectors, 16 KiB clusters) read-only and lists and reads it.
// The names and sizes are what mdir shows for it; with mtools installed
// the contents are compared with mcopy's.
func TestCorpusVFAT(t *testing.T) {
	p := testdata.Unpack(t, "img_fs_vfat.img.xz")
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	// An *os.File opened read-only is still an io.WriterAt; ask for
	// read-only so nothing can be written.
	fs, err := OpenWithOptions(f, st.Size(), Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if fs.Type() != FAT12 || fs.ClusterSize() != 16384 {
		t.Errorf("type %v, cluster size %d; want FAT12 with 16 KiB clusters", fs.Type(), fs.ClusterSize())
	}
	ents, err := fs.ReadDir("/")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"luks.img": 8388608, "luks_header.img": 1052672}
	if len(ents) != len(want) {
		t.Errorf("%d entries, want %d", len(ents), len(want))
	}
	for _, e := range ents {
		fi := e.(*FileInfo)
		t.Logf("%-16s %-12s %9d %v", fi.Name(), fi.ShortName(), fi.Size(), fi.ModTime())
		if size, ok := want[fi.Name()]; !ok || size != fi.Size() {
			t.Errorf("unexpected entry %s of %d bytes", fi.Name(), fi.Size())
		}
	}
	r, err := fs.Check(false)
	if err != nil || !r.Clean() {
		t.Errorf("Check: %v\n%s", err, r)
	}
	if err := fs.WriteFile("/x", nil, 0o644); err == nil {
		t.Error("wrote to a read-only filesystem")
	}
	if _, err := runTool(t, nil, "mcopy", "--version"); err != nil {
		t.Log("mtools not installed: contents not compared")
		return
	}
	for name := range want {
		got := mustRead(t, fs, "/"+name)
		ref, err := runTool(t, nil, "mcopy", "-n", "-i", p, "::/"+name, "-")
		if err != nil {
			t.Fatalf("mcopy: %v", err)
		}
		if string(got) != ref {
			t.Errorf("%s differs from mcopy's copy", name)
		}
	}
}
