//go:build linux && cgofuse

package cgofs_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/winfsp/cgofuse/fuse"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/conformance"
	"github.com/cryptvol/cryptvol/mount/cgofs"
)

// TestAdapterOpenFiles calls the adapter as WinFsp would, without a
// mount, on a real FAT image, for what the suites through the kernel do
// not reach: two spellings of a FAT name open for writing share one
// writer; a file renamed (its directory too) while open for writing keeps
// taking writes, which land in the file at its new name; a file removed
// while open for reading still reads its old content; and everything is
// on the image after Close, which fsck.vfat finds clean.
func TestAdapterOpenFiles(t *testing.T) {
	conformance.NeedTool(t, "fsck.vfat")
	img := conformance.FATImage(t, "16", 9<<20, nil)
	dev, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	fi, _ := dev.Stat()
	fsys, err := filesystem.Open(dev, fi.Size(), filesystem.Options{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	a := cgofs.New(fsys, cgofs.Options{})
	must := func(what string, e int) {
		t.Helper()
		if e < 0 {
			t.Fatalf("%s: %v", what, fuse.Error(e))
		}
	}
	must("mkdir", a.Mkdir("/Dir", 0o755))
	e, fh1 := a.Create("/Dir/Name.txt", fuse.O_RDWR, 0o644)
	must("create", e)
	e, fh2 := a.Open("/DIR/NAME.TXT", fuse.O_WRONLY)
	must("open in other case", e)
	must("write 1", a.Write("/Dir/Name.txt", []byte("hello "), 0, fh1))
	must("write 2", a.Write("/DIR/NAME.TXT", []byte("world"), 6, fh2))
	var st fuse.Stat_t
	must("getattr", a.Getattr("/dir/name.txt", &st, ^uint64(0)))
	if st.Size != 11 {
		t.Errorf("size after writes through both spellings: %d, want 11 (one writer)", st.Size)
	}
	must("rename dir", a.Rename("/Dir", "/Moved"))
	must("write after rename", a.Write("/Moved/Name.txt", []byte("!"), 11, fh1))
	buf := make([]byte, 64)
	if n := a.Read("/Moved/Name.txt", buf, 0, fh2); string(buf[:max(n, 0)]) != "hello world!" {
		t.Errorf("read after rename: %q (%d), want %q", buf[:max(n, 0)], n, "hello world!")
	}
	must("release 1", a.Release("/Moved/Name.txt", fh1))
	must("release 2", a.Release("/Moved/Name.txt", fh2))

	e, fh := a.Create("/gone.bin", fuse.O_WRONLY, 0o644)
	must("create gone", e)
	old := bytes.Repeat([]byte("old content "), 5000)
	must("write gone", a.Write("/gone.bin", old, 0, fh))
	must("release gone", a.Release("/gone.bin", fh))
	e, rh := a.Open("/gone.bin", fuse.O_RDONLY)
	must("open gone", e)
	must("unlink", a.Unlink("/gone.bin"))
	e, nh := a.Create("/gone.bin", fuse.O_WRONLY, 0o644)
	must("create anew", e)
	must("write anew", a.Write("/gone.bin", []byte("new"), 0, nh))
	got := make([]byte, len(old)+10)
	if n := a.Read("/gone.bin", got, 0, rh); n != len(old) || !bytes.Equal(got[:n], old) {
		t.Errorf("read of a removed file through its handle: %d bytes, want its old %d", n, len(old))
	}
	must("release old", a.Release("/gone.bin", rh))
	must("release new", a.Release("/gone.bin", nh))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	check := conformance.OpenImage(t, img, false)
	for name, want := range map[string]string{"/Moved/Name.txt": "hello world!", "/gone.bin": "new"} {
		f, err := check.Open(name)
		if err != nil {
			t.Errorf("%s after Close: %v", name, err)
			continue
		}
		b := make([]byte, 100000)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if string(b[:n]) != want {
			t.Errorf("%s after Close: %q, want %q", name, b[:n], want)
		}
	}
	check.Close()
	conformance.Run(t, nil, "fsck.vfat", "-n", img)
}
