package nfs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	billy "github.com/go-git/go-billy/v5"
	gonfs "github.com/willscott/go-nfs"
	"github.com/willscott/go-nfs/helpers"

	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/filesystem"
)

// fatImage formats a FAT image of size bytes in a file and returns it.
func fatImage(t *testing.T, size int64) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "fat.img"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := fat.Format(f, size, fat.FormatOptions{}); err != nil {
		t.Fatal(err)
	}
	return f
}

func openFS(t *testing.T, f *os.File, writable bool) filesystem.FS {
	t.Helper()
	fi, _ := f.Stat()
	fsys, err := filesystem.Open(f, fi.Size(), filesystem.Options{Writable: writable})
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

// snapshot copies the image as it is on disk now, as a crash would leave
// it, and opens the copy read-only.
func snapshot(t *testing.T, f *os.File) filesystem.FS {
	t.Helper()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy.img")
	os.WriteFile(cp, b, 0o600)
	g, err := os.Open(cp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return openFS(t, g, false)
}

func writeAt(t *testing.T, b billy.Filesystem, name string, flag int, off int64, data []byte) error {
	t.Helper()
	f, err := b.OpenFile(name, flag, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestWritesAreOnDiskAfterClose does what go-nfs does for CREATE and then
// WRITEs out of order (open, seek, write, close each), and checks after
// every close that a copy of the image, taken without closing anything,
// holds the bytes: go-nfs answers each WRITE with FILE_SYNC. On FAT each
// WRITE opens the file anew; on ext4 the file made by CREATE stays open.
func TestWritesAreOnDiskAfterClose(t *testing.T) {
	t.Run("fat", func(t *testing.T) { testWritesOnDisk(t, fatImage(t, 16<<20)) })
	t.Run("ext4", func(t *testing.T) { testWritesOnDisk(t, ext4Image(t, 32<<20)) })
}

func testWritesOnDisk(t *testing.T, img *os.File) {
	fsys := openFS(t, img, true)
	defer fsys.Close()
	b := newBillyFS(fsys, false)
	defer b.close()

	if err := b.MkdirAll("/dir/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := b.Create("/dir/sub/data.bin")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := make([]byte, 3<<20+7)
	rand.New(rand.NewSource(1)).Read(want)
	const chunk = 256 << 10
	// Second half first, then the first: offsets beyond the end too.
	var offs []int64
	for off := int64(len(want)/chunk/2) * chunk; off < int64(len(want)); off += chunk {
		offs = append(offs, off)
	}
	for off := int64(0); off < int64(len(want)/chunk/2)*chunk; off += chunk {
		offs = append(offs, off)
	}
	for _, off := range offs {
		end := min(off+chunk, int64(len(want)))
		if err := writeAt(t, b, "/dir/sub/data.bin", os.O_RDWR, off, want[off:end]); err != nil {
			t.Fatalf("write at %d: %v", off, err)
		}
	}
	got := readAll(t, snapshot(t, img), "/dir/sub/data.bin")
	if !bytes.Equal(got, want) {
		t.Fatalf("on disk after the last close: %d bytes, want %d (equal: %v)", len(got), len(want), bytes.Equal(got, want))
	}
	// The server reads back what it wrote, through the kept writer.
	rf, err := b.Open("/dir/sub/data.bin")
	if err != nil {
		t.Fatal(err)
	}
	back := make([]byte, len(want))
	if _, err := rf.ReadAt(back, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	rf.Close()
	if !bytes.Equal(back, want) {
		t.Error("read through the server differs from what was written")
	}
	// Rename and remove are on disk on return too.
	if err := b.Rename("/dir/sub/data.bin", "/dir/moved.bin"); err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t, img)
	if _, err := snap.Stat("/dir/sub/data.bin"); err == nil {
		t.Error("renamed file still at its old path on disk")
	}
	if got := readAll(t, snap, "/dir/moved.bin"); !bytes.Equal(got, want) {
		t.Error("renamed file differs on disk")
	}
	if err := b.Remove("/dir/moved.bin"); err != nil {
		t.Fatal(err)
	}
	if _, err := snapshot(t, img).Stat("/dir/moved.bin"); err == nil {
		t.Error("removed file still on disk")
	}
	if c, ok := fsys.(filesystem.Checker); ok {
		if err := b.close(); err != nil {
			t.Fatal(err)
		}
		rep, err := c.Check(false)
		if err != nil || !rep.Clean() {
			t.Errorf("check: %v\n%v", err, rep)
		}
	}
}

func readAll(t *testing.T, fsys filesystem.FS, name string) []byte {
	t.Helper()
	f, err := fsys.Open(name)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ext4Image formats an ext4 image of size bytes in a file.
func ext4Image(t *testing.T, size int64) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "ext4.img"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	f.Truncate(size)
	if err := filesystem.FormatExt4(f, size, "", 0); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestOldFilePatchedOnFAT: FAT and exFAT open an existing file for
// writing, so a WRITE into the middle of a file from before the server
// changes just those bytes, on disk when it returns.
func TestOldFilePatchedOnFAT(t *testing.T) {
	img := fatImage(t, 8<<20)
	fsys := openFS(t, img, true)
	defer fsys.Close()
	w := fsys.(filesystem.Writer)
	wf, err := w.Create("/old.txt")
	if err != nil {
		t.Fatal(err)
	}
	wf.Write([]byte("old contents"))
	wf.Close()
	w.Sync()
	b := newBillyFS(fsys, false)
	defer b.close()
	if err := writeAt(t, b, "/old.txt", os.O_RDWR, 4, []byte("CON")); err != nil {
		t.Fatal(err)
	}
	snap := snapshot(t, img)
	if got := readAll(t, snap, "/old.txt"); string(got) != "old CONtents" {
		t.Fatalf("after a write at 4: %q", got)
	}
	// Nothing stays open between WRITEs: the copy is a cleanly closed
	// volume.
	if rep, err := snap.(filesystem.Checker).Check(false); err != nil || !rep.Clean() {
		t.Errorf("copy taken between WRITEs: %v\n%v", err, rep)
	}
	// SETATTR's truncate (open, Truncate, Close), likewise: on disk and
	// clean after the Close (it once synced with the file still open).
	f, err := b.OpenFile("/old.txt", os.O_WRONLY|os.O_EXCL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	snap = snapshot(t, img)
	if got := readAll(t, snap, "/old.txt"); string(got) != "ol" {
		t.Fatalf("after truncate to 2: %q", got)
	}
	if rep, err := snap.(filesystem.Checker).Check(false); err != nil || !rep.Clean() {
		t.Errorf("copy taken after a truncate: %v\n%v", err, rep)
	}
}

// TestOldFileIsReplacedNotPatchedOnExt4: on ext4 a non-empty file from
// before the server cannot be written into (the filesystem layer has no
// open for writing that keeps contents), but truncating it to 0, as a
// client's O_TRUNC does through SETATTR, makes it writable.
func TestOldFileIsReplacedNotPatchedOnExt4(t *testing.T) {
	img := ext4Image(t, 16<<20)
	fsys := openFS(t, img, true)
	w := fsys.(filesystem.Writer)
	wf, err := w.Create("/old.txt")
	if err != nil {
		t.Fatal(err)
	}
	wf.Write([]byte("old contents"))
	wf.Close()
	w.Sync()
	b := newBillyFS(fsys, false)
	defer fsys.Close()
	defer b.close()
	err = writeAt(t, b, "/old.txt", os.O_RDWR, 4, []byte("new"))
	if !errors.Is(err, errOldFile) {
		t.Fatalf("write into an old file: %v, want %v", err, errOldFile)
	}
	if got := readAll(t, fsys, "/old.txt"); string(got) != "old contents" {
		t.Fatalf("refused write changed the file: %q", got)
	}
	f, err := b.OpenFile("/old.txt", os.O_WRONLY|os.O_EXCL, 0) // go-nfs's SETATTR size
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := writeAt(t, b, "/old.txt", os.O_RDWR, 0, []byte("replaced")); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, snapshot(t, img), "/old.txt"); string(got) != "replaced" {
		t.Fatalf("after truncate and write: %q", got)
	}
}

// TestReadOnlyRefusesEveryChange: go-nfs is told there is no write
// capability, and every change is refused here too.
func TestReadOnlyRefusesEveryChange(t *testing.T) {
	img := fatImage(t, 8<<20)
	fsys := openFS(t, img, true)
	defer fsys.Close()
	fsys.(filesystem.Writer).Mkdir("/d")
	b := newBillyFS(fsys, true)
	if billy.CapabilityCheck(b, billy.WriteCapability) {
		t.Error("read-only adapter claims write capability")
	}
	h := newHandler(b, "/x")
	if h.Change(b) != nil {
		t.Error("read-only handler offers Change")
	}
	for what, err := range map[string]error{
		"create":  func() error { _, err := b.Create("/f"); return err }(),
		"mkdir":   b.MkdirAll("/e", 0o755),
		"remove":  b.Remove("/d"),
		"rename":  b.Rename("/d", "/e"),
		"chmod":   b.Chmod("/d", 0o700),
		"chtimes": b.Chtimes("/d", fsTime, fsTime),
	} {
		if !errors.Is(err, os.ErrPermission) {
			t.Errorf("%s: %v, want permission denied", what, err)
		}
	}
	if _, err := fsys.Stat("/d"); err != nil {
		t.Error("read-only serve removed /d")
	}
}

// TestMountNeedsTheExportPath: MOUNT of anything but the secret path is
// refused, and a handle nobody was given is stale.
func TestMountNeedsTheExportPath(t *testing.T) {
	img := fatImage(t, 8<<20)
	fsys := openFS(t, img, false)
	defer fsys.Close()
	h := newHandler(newBillyFS(fsys, true), "/0123456789abcdef0123456789abcdef")
	for _, p := range []string{"/", "", "/0123456789abcdef0123456789abcde", "/etc"} {
		if st, _, _ := h.Mount(context.Background(), nil, gonfs.MountRequest{Dirpath: []byte(p)}); st != gonfs.MountStatusErrAcces {
			t.Errorf("mount %q: status %v, want refused", p, st)
		}
	}
	if st, _, _ := h.Mount(context.Background(), nil, gonfs.MountRequest{Dirpath: []byte("/0123456789abcdef0123456789abcdef")}); st != gonfs.MountStatusOk {
		t.Errorf("mount of the export: status %v", st)
	}
	if _, _, err := h.FromHandle(make([]byte, 16)); err == nil {
		t.Error("a made-up handle was accepted")
	}
	if a, b := h.ToHandle(nil, nil), h.ToHandle(nil, []string{}); !bytes.Equal(a, b) || len(a) != 16 {
		t.Errorf("root handle unstable or short: %x %x", a, b)
	}
}

// renameSequence is what go-nfs does for RENAME of a directory the client
// has open: handles for the directory and a file in it exist, the rename
// happens, go-nfs invalidates the old handle. It returns what the client's
// handles resolve to afterwards.
func renameSequence(t *testing.T, h gonfs.Handler, b *billyFS) (dir, file []string, dirErr, fileErr error) {
	t.Helper()
	if err := b.MkdirAll("/a", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeAt(t, b, "/a/f", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	hd := h.ToHandle(b, []string{"a"})
	hf := h.ToHandle(b, []string{"a", "f"})
	if err := b.Rename("/a", "/b"); err != nil {
		t.Fatal(err)
	}
	h.InvalidateHandle(b, h.ToHandle(b, []string{"a"})) // as nfs_onrename.go
	_, dir, dirErr = h.FromHandle(hd)
	_, file, fileErr = h.FromHandle(hf)
	return
}

// TestHandlesSurviveRename is rclone issue 7973 / go-nfs issue 54: after
// a rename the client keeps using the handles it has. go-nfs's own
// CachingHandler makes them stale (shown first, so this test would notice
// if go-nfs fixed it); this handler re-points them.
func TestHandlesSurviveRename(t *testing.T) {
	t.Run("go-nfs CachingHandler", func(t *testing.T) {
		fsys := openFS(t, fatImage(t, 8<<20), true)
		defer fsys.Close()
		b := newBillyFS(fsys, false)
		defer b.close()
		h := helpers.NewCachingHandler(helpers.NewNullAuthHandler(b), 1024)
		dir, _, dirErr, _ := renameSequence(t, h, b)
		if dirErr == nil && len(dir) == 1 && dir[0] == "b" {
			t.Log("go-nfs's CachingHandler now keeps handles across renames")
		} else {
			t.Logf("go-nfs's CachingHandler after rename: dir handle -> %q, %v (the bug this package works around)", dir, dirErr)
		}
	})
	fsys := openFS(t, fatImage(t, 8<<20), true)
	defer fsys.Close()
	b := newBillyFS(fsys, false)
	defer b.close()
	h := newHandler(b, "/x")
	dir, file, dirErr, fileErr := renameSequence(t, h, b)
	if dirErr != nil || len(dir) != 1 || dir[0] != "b" {
		t.Errorf("directory handle after rename: %q, %v; want [b]", dir, dirErr)
	}
	if fileErr != nil || len(file) != 2 || file[0] != "b" || file[1] != "f" {
		t.Errorf("handle of a file inside after rename: %q, %v; want [b f]", file, fileErr)
	}
	// Replacing: the handle of what the rename replaced goes stale, the
	// moved file's handle follows it.
	writeAt(t, b, "/b/g", os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0, []byte("g"))
	hg := h.ToHandle(b, []string{"b", "g"})
	hf := h.ToHandle(b, []string{"b", "f"})
	if err := b.Rename("/b/f", "/b/g"); err != nil {
		t.Fatal(err)
	}
	h.InvalidateHandle(b, hf)
	if _, _, err := h.FromHandle(hg); err == nil {
		t.Error("handle of the replaced file still valid")
	}
	if _, p, err := h.FromHandle(hf); err != nil || len(p) != 2 || p[1] != "g" {
		t.Errorf("moved file's handle: %q, %v", p, err)
	}
	// Remove: stale.
	if err := b.Remove("/b/g"); err != nil {
		t.Fatal(err)
	}
	h.InvalidateHandle(b, hf)
	if _, _, err := h.FromHandle(hf); err == nil {
		t.Error("handle of a removed file still valid")
	}
}

var fsTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
