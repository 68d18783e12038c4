package cgofs_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/mount/cgofs"
)

// TestAvailableAgreesWithTheChoice: Available either finds WinFsp or
// says it is not installed, and 'cryptvol mount' picks WinFsp exactly
// when it is there, WebDAV otherwise.
func TestAvailableAgreesWithTheChoice(t *testing.T) {
	err := cgofs.Available()
	if err != nil && !errors.Is(err, cgofs.ErrNotInstalled) {
		t.Fatalf("Available: %v, want nil or ErrNotInstalled", err)
	}
	want := mount.FrontWebDAV
	if err == nil {
		want = mount.FrontWinFsp
	}
	if f, why, _ := mount.ChooseFrontEnd(""); f != want {
		t.Errorf("default front end %q (%s), want %q (Available: %v)", f, why, want, err)
	}
}

// TestWinFspMount, where WinFsp is installed, mounts a FAT image made and
// filled through the filesystem layer at a new directory, reads it with
// testing/fstest through Windows' own file API, writes a file through
// the mount, and finds it in the image after unmounting.
func TestWinFspMount(t *testing.T) {
	if err := cgofs.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	img := filepath.Join(t.TempDir(), "fat.img")
	dev, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	const size = 16 << 20
	if err := dev.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := fat.Format(dev, size, fat.FormatOptions{Label: "WINFSP"}); err != nil {
		t.Fatal(err)
	}
	fsys, err := filesystem.Open(dev, size, filesystem.Options{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	w := fsys.(filesystem.Writer)
	want := map[string]string{"a.txt": "first file", "dïr/ünïcode.txt": "second", "dïr/empty": ""}
	if err := w.Mkdir("/dïr"); err != nil {
		t.Fatal(err)
	}
	for name, content := range want {
		f, err := w.Create("/" + name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, content)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "mnt") // WinFsp makes the directory
	m, err := cgofs.Mount(dir, fsys, cgofs.Options{FsName: "winfsp-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Unmount() })
	var names []string
	for name := range want {
		names = append(names, filepath.ToSlash(name))
	}
	if err := fstest.TestFS(os.DirFS(dir), names...); err != nil {
		t.Error(err)
	}
	for name, content := range want {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name))); err != nil || string(b) != content {
			t.Errorf("%s through WinFsp: %q, %v; want %q", name, b, err, content)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "written.bin"), []byte("through WinFsp"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Unmount(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(filepath.Join(dir, "a.txt")); err == nil && time.Now().Before(deadline); _, err = os.Stat(filepath.Join(dir, "a.txt")) {
		time.Sleep(50 * time.Millisecond)
	}
	check, err := filesystem.Open(dev, size, filesystem.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	f, err := check.Open("/written.bin")
	if err != nil {
		t.Fatalf("the file written through WinFsp: %v", err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "through WinFsp" {
		t.Errorf("written.bin: %q", b)
	}
}
