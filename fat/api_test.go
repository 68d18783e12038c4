package fat

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"os"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/fattest"
)

func newTestFS(t *testing.T, size int64, typ Type) (*FS, *memDev) {
	t.Helper()
	m := newMemDev(t, size)
	mustFormat(t, m, size, FormatOptions{Type: typ, Label: "API"})
	return mustOpen(t, m, size), m
}

// TestIOFS runs testing/fstest's conformance checks on the io/fs view.
func TestIOFS(t *testing.T) {
	fs, _ := newTestFS(t, 10<<20, TypeAuto)
	fattest.IOFSConformance(t, fs)
}

func TestFileSemantics(t *testing.T) {
	fs, _ := newTestFS(t, 10<<20, TypeAuto)
	fattest.FileSemantics[*File, *FileInfo](t, fs)
	if _, err := fs.OpenFile("/", os.O_RDWR, 0); !errors.Is(err, ErrIsDir) {
		t.Errorf("root for writing: %v", err)
	}
	if err := fs.Mkdir("/f.txt"); !errors.Is(err, iofs.ErrExist) {
		t.Errorf("mkdir over a file: %v", err)
	}
	if _, err := fs.ReadDir("/f.txt"); !errors.Is(err, ErrNotDir) {
		t.Errorf("readdir of a file: %v", err)
	}
	if err := fs.WriteFile("/bad:name", nil, 0o644); !errors.Is(err, ErrInvalidName) {
		t.Errorf("bad name: %v", err)
	}
	// Case-insensitive lookup keeps the stored spelling.
	fi, err := fs.Stat("/F.TXT")
	if err != nil || fi.Name() != "f.txt" {
		t.Errorf("Stat(/F.TXT) = %v, %v", fi, err)
	}
	// Read-only attribute from perm.
	if err := fs.WriteFile("/ro.txt", []byte("x"), 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.OpenFile("/ro.txt", os.O_WRONLY, 0); !errors.Is(err, iofs.ErrPermission) {
		t.Errorf("writing a read-only file: %v", err)
	}
	if fi, _ := fs.Stat("/ro.txt"); fi.Mode().Perm() != 0o444 || fi.Attributes()&AttrReadOnly == 0 {
		t.Errorf("mode %v attrs %#x", fi.Mode(), fi.Attributes())
	}
}

func TestRenameAndRemoveRules(t *testing.T) {
	fs, _ := newTestFS(t, 10<<20, TypeAuto)
	fs.MkdirAll("/a/b")
	mustWrite(t, fs, "/a/b/f", []byte("f"))
	mustWrite(t, fs, "/g", []byte("g"))
	if err := fs.Rename("/a", "/a/b/c"); !errors.Is(err, iofs.ErrInvalid) {
		t.Errorf("moving a directory into itself: %v", err)
	}
	if err := fs.Rename("/g", "/a"); !errors.Is(err, ErrIsDir) {
		t.Errorf("file over directory: %v", err)
	}
	if err := fs.Rename("/a", "/g"); !errors.Is(err, ErrNotDir) {
		t.Errorf("directory over file: %v", err)
	}
	if err := fs.Remove("/a"); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("remove non-empty: %v", err)
	}
	// Directory moves keep their content and fix "..".
	if err := fs.Rename("/a/b", "/moved"); err != nil {
		t.Fatal(err)
	}
	if string(mustRead(t, fs, "/moved/f")) != "f" {
		t.Error("content lost in a directory move")
	}
	// Case-only rename.
	if err := fs.Rename("/g", "/G"); err != nil {
		t.Fatal(err)
	}
	if fi, err := fs.Stat("/g"); err != nil || fi.Name() != "G" {
		t.Errorf("after case rename: %v %v", fi, err)
	}
	// Replace a file; the handle on the replaced one still reads its data.
	mustWrite(t, fs, "/old", []byte("old content"))
	h, err := fs.Open("/old")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, fs, "/new", []byte("new"))
	if err := fs.Rename("/new", "/old"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 11)
	if n, _ := h.ReadAt(buf, 0); string(buf[:n]) != "old content" {
		t.Errorf("open handle of the replaced file reads %q", buf[:n])
	}
	h.Close()
	if string(mustRead(t, fs, "/old")) != "new" {
		t.Error("rename did not replace")
	}
	r, err := fs.Check(false)
	if err != nil || !r.Clean() {
		t.Errorf("Check: %v %s", err, r)
	}
	if err := fs.RemoveAll("/moved"); err != nil {
		t.Fatal(err)
	}
	if err := fs.RemoveAll("/does/not/exist"); err != nil {
		t.Errorf("RemoveAll of nothing: %v", err)
	}
}

func TestTimesAndStatfs(t *testing.T) {
	loc := time.FixedZone("X", -7*3600)
	now := time.Date(2024, 2, 29, 13, 14, 15, 670_000_000, loc)
	m := newMemDev(t, 10<<20)
	mustFormat(t, m, 10<<20, FormatOptions{})
	fs, err := OpenWithOptions(m, 10<<20, Options{Location: loc, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, fs, "/t", []byte("x"))
	fi, _ := fs.Stat("/t")
	if !fi.CreateTime().Equal(now.Truncate(10 * time.Millisecond)) {
		t.Errorf("create time %v, want %v", fi.CreateTime(), now)
	}
	if !fi.ModTime().Equal(time.Date(2024, 2, 29, 13, 14, 14, 0, loc)) {
		t.Errorf("mod time %v (two-second steps)", fi.ModTime())
	}
	if !fi.AccessTime().Equal(time.Date(2024, 2, 29, 0, 0, 0, 0, loc)) {
		t.Errorf("access time %v (date only)", fi.AccessTime())
	}
	old := time.Date(1975, 1, 1, 0, 0, 0, 0, loc)
	if err := fs.Chtimes("/t", old, old); err != nil {
		t.Fatal(err)
	}
	if fi, _ := fs.Stat("/t"); !fi.ModTime().Equal(time.Date(1980, 1, 1, 0, 0, 0, 0, loc)) {
		t.Errorf("clamped time %v", fi.ModTime())
	}
	st := fs.Statfs()
	before := st.FreeBytes
	mustWrite(t, fs, "/big", make([]byte, 100000))
	st = fs.Statfs()
	cs := int64(st.ClusterSize)
	if before-st.FreeBytes != (100000+cs-1)/cs*cs {
		t.Errorf("free space went from %d to %d", before, st.FreeBytes)
	}
	if st.TotalBytes != int64(st.TotalClusters)*cs {
		t.Errorf("total %d", st.TotalBytes)
	}
}

// TestRepair damages a volume the ways a crash can and checks that
// Check(true) puts it right, to fsck.fat's satisfaction.
func TestRepair(t *testing.T) {
	const size = 40 << 20
	m := newMemDev(t, size)
	mustFormat(t, m, size, FormatOptions{Type: FAT32, ClusterSize: 512})
	fs := mustOpen(t, m, size)
	mustWrite(t, fs, "/a", pattern(1, 10000))
	mustWrite(t, fs, "/b", pattern(2, 10000))
	fs.Close()
	g, _ := parseBootSector(m.Data, size)
	// A lost chain of three clusters, only in the first FAT (so the copies
	// differ too), and a wrong FSInfo count.
	for c := uint32(1000); c < 1003; c++ {
		v := c + 1
		if c == 1002 {
			v = eoc32
		}
		binaryPut32(m.Data[g.fatOffset+int64(4*c):], v)
	}
	binaryPut32(m.Data[int64(g.fsInfoSector)*512+488:], 12345)
	fs = mustOpen(t, m, size)
	r, err := fs.Check(false)
	if err != nil {
		t.Fatal(err)
	}
	if r.LostClusters != 3 || r.LostChains != 1 || r.FATMismatch != 1 || !r.FreeCountWrong {
		t.Fatalf("Check found:\n%s", r)
	}
	r, err = fs.Check(true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("repair:\n%s", r)
	if r, err := fs.Check(false); err != nil || !r.Clean() {
		t.Fatalf("after repair: %v\n%s", err, r)
	}
	if !bytes.Equal(mustRead(t, fs, "/a"), pattern(1, 10000)) {
		t.Error("repair damaged a file")
	}
	fs.Close()
	needTools(t, "fsck.fat")
	fsckClean(t, saveImage(t, m))
}

func binaryPut32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

// TestConcurrentUse drives one FS from several goroutines (run with -race
// to check the locking).
func TestConcurrentUse(t *testing.T) {
	fs, m := newTestFS(t, 20<<20, TypeAuto)
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func(g int) {
			dir := "/g" + string(rune('a'+g))
			if err := fs.Mkdir(dir); err != nil {
				done <- err
				return
			}
			shared, err := fs.Create(dir + "/shared")
			if err != nil {
				done <- err
				return
			}
			for i := 0; i < 50; i++ {
				p := dir + "/f" + string(rune('0'+i%10))
				data := pattern(g*100+i, 1000+i*10)
				if err := fs.WriteFile(p, data, 0o644); err != nil {
					done <- err
					return
				}
				if got, err := fs.ReadFile(p); err != nil || !bytes.Equal(got, data) {
					done <- errors.Join(err, errors.New("content"))
					return
				}
				shared.WriteAt(data[:10], int64(i*10))
				fs.ReadDir(dir)
				fs.Statfs()
			}
			done <- shared.Close()
		}(g)
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	r, err := fs.Check(false)
	if err != nil || !r.Clean() {
		t.Fatalf("Check: %v %s", err, r)
	}
	fs.Close()
	_ = m
}
