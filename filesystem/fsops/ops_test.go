package fsops_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/fsops"
)

// fatTree formats a FAT filesystem of size bytes in a temporary file with
// the project's own Format and returns a Tree on it (closed at the end
// of the test).
func fatTree(t *testing.T, size int64) *fsops.Tree {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "fat.img"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if _, err := filesystem.Format(f, size, filesystem.FormatOptions{Type: "fat"}); err != nil {
		t.Fatal(err)
	}
	fsys, err := filesystem.OpenAs("vfat", f, size, filesystem.Options{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	w := fsys.(filesystem.Writer)
	t.Cleanup(func() { w.Close() })
	return fsops.New(w, "vfat", 0o022)
}

// localFile writes a local file of data and returns its path.
func localFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readVol(t *testing.T, tr *fsops.Tree, name string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := fsops.CopyOut(context.Background(), tr.Writer(), name, &b, nil); err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return b.Bytes()
}

func wantKind(t *testing.T, what string, err error, k fsops.Kind) {
	t.Helper()
	var e *fsops.Error
	if !errors.As(err, &e) || e.Kind != k {
		t.Fatalf("%s: %v (%#v), want an fsops.Error of kind %d", what, err, err, k)
	}
}

// noTemporaries fails when a directory of the volume holds a temporary
// name of a put.
func noTemporaries(t *testing.T, tr *fsops.Tree, dir string) {
	t.Helper()
	ents, err := tr.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".cryptvol-") {
			t.Errorf("%s holds the temporary %s", dir, e.Name())
		}
	}
}

// TestPutOverwriteNeedsForce: an existing file is kept without Force,
// replaced with it, and no temporary name is left either way.
func TestPutOverwriteNeedsForce(t *testing.T) {
	tr := fatTree(t, 8<<20)
	ctx := context.Background()
	src := localFile(t, "a.txt", []byte("first"))
	if err := fsops.Put(ctx, tr, fsops.PutOptions{Sources: []string{src}, Dest: "/", Into: true}); err != nil {
		t.Fatal(err)
	}
	if got := readVol(t, tr, "/a.txt"); string(got) != "first" {
		t.Fatalf("/a.txt holds %q", got)
	}
	os.WriteFile(src, []byte("second"), 0o644)
	err := fsops.Put(ctx, tr, fsops.PutOptions{Sources: []string{src}, Dest: "/", Into: true})
	wantKind(t, "put over an existing file", err, fsops.WouldDestroy)
	if got := readVol(t, tr, "/a.txt"); string(got) != "first" {
		t.Fatalf("a refused put changed /a.txt to %q", got)
	}
	if err := fsops.Put(ctx, tr, fsops.PutOptions{Sources: []string{src}, Dest: "/", Into: true, Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := readVol(t, tr, "/a.txt"); string(got) != "second" {
		t.Fatalf("after a forced put /a.txt holds %q", got)
	}
	noTemporaries(t, tr, "/")
}

// TestPutSpaceCheckedFirst: a put of more than the volume holds is
// refused before anything is written, the files that would fit included.
func TestPutSpaceCheckedFirst(t *testing.T) {
	tr := fatTree(t, 4<<20)
	small := localFile(t, "small", []byte("fits"))
	big := localFile(t, "big", make([]byte, 8<<20))
	err := fsops.Put(context.Background(), tr, fsops.PutOptions{Sources: []string{small, big}, Dest: "/d/", Into: true})
	wantKind(t, "put of more than the volume holds", err, fsops.NoRoom)
	if !errors.Is(err, filesystem.ErrNoSpace) || !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("the refusal says %q", err)
	}
	if ents, _ := tr.ReadDir("/"); len(ents) != 0 {
		t.Errorf("a refused put left %d entries in the root", len(ents))
	}
}

// TestPutTreeAndGet puts a directory (through the batch of renames FAT
// has, and without), leaves no temporary name, and Get brings the same
// files back, refusing to overwrite without Force.
func TestPutTreeAndGet(t *testing.T) {
	for _, batch := range []int{0, 1024} {
		tr := fatTree(t, 8<<20)
		ctx := context.Background()
		dir := filepath.Join(t.TempDir(), "src")
		os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
		want := map[string]string{"one.txt": "1", "sub/two.txt": "22", "sub/three.txt": "333"}
		for n, b := range want {
			os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644)
		}
		var wrote int64
		o := fsops.PutOptions{Sources: []string{dir}, Dest: "/", Into: true, Recursive: true, BatchFiles: batch,
			Wrote: func(n int64) { wrote += n }}
		if err := fsops.Put(ctx, tr, o); err != nil {
			t.Fatal(err)
		}
		if wrote != 6 {
			t.Errorf("Wrote heard of %d bytes, want 6", wrote)
		}
		noTemporaries(t, tr, "/src")
		noTemporaries(t, tr, "/src/sub")
		out := filepath.Join(t.TempDir(), "out")
		st, err := tr.Writer().Stat("/src")
		if err != nil {
			t.Fatal(err)
		}
		if err := fsops.Get(ctx, tr.Writer(), "/src", st, out, fsops.GetOptions{}); err == nil {
			t.Fatal("Get of a directory without Recursive succeeded")
		}
		if err := fsops.Get(ctx, tr.Writer(), "/src", st, out, fsops.GetOptions{Recursive: true}); err != nil {
			t.Fatal(err)
		}
		for n, b := range want {
			if got, err := os.ReadFile(filepath.Join(out, n)); err != nil || string(got) != b {
				t.Errorf("got %s: %q, %v; want %q", n, got, err, b)
			}
		}
		err = fsops.Get(ctx, tr.Writer(), "/src", st, out, fsops.GetOptions{Recursive: true})
		wantKind(t, "get over existing local files", err, fsops.WouldDestroy)
		if err := fsops.Get(ctx, tr.Writer(), "/src", st, out, fsops.GetOptions{Recursive: true, Force: true}); err != nil {
			t.Errorf("get --force: %v", err)
		}
	}
}

// TestPutRefusesBadNames: a name FAT cannot store is refused before
// anything is written.
func TestPutRefusesBadNames(t *testing.T) {
	tr := fatTree(t, 8<<20)
	src := localFile(t, "a.txt", []byte("a"))
	err := fsops.Put(context.Background(), tr, fsops.PutOptions{Sources: []string{src}, Dest: "/a?b"})
	wantKind(t, "put to a name with '?'", err, fsops.BadOperand)
	if ents, _ := tr.ReadDir("/"); len(ents) != 0 {
		t.Errorf("a refused put left %d entries", len(ents))
	}
}

// TestMkdirRemoveMove: mkdir with and without parents, rm with and
// without recursive, mv over a file with and without force and into a
// directory.
func TestMkdirRemoveMove(t *testing.T) {
	tr := fatTree(t, 8<<20)
	ctx := context.Background()
	if err := fsops.Mkdir(tr, []string{"/a/b/c"}, false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("mkdir of /a/b/c without parents: %v, want fs.ErrNotExist", err)
	}
	if err := fsops.Mkdir(tr, []string{"/a/b/c", "/a/b"}, true); err != nil {
		t.Fatalf("mkdir -p: %v", err)
	}
	if fi, err := tr.Stat("/a/b/c"); err != nil || !fi.IsDir() {
		t.Fatalf("/a/b/c after mkdir -p: %v, %v", fi, err)
	}
	if err := fsops.Mkdir(tr, []string{"/a"}, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("mkdir of an existing /a: %v, want fs.ErrExist", err)
	}
	x := localFile(t, "x", []byte("x"))
	y := localFile(t, "y", []byte("y"))
	for _, p := range []struct{ src, dest string }{{x, "/a/b/c/x"}, {y, "/y"}} {
		if err := fsops.Put(ctx, tr, fsops.PutOptions{Sources: []string{p.src}, Dest: p.dest}); err != nil {
			t.Fatal(err)
		}
	}

	err := fsops.Move(tr, "/y", "/a/b/c/x", false)
	wantKind(t, "mv over a file without force", err, fsops.WouldDestroy)
	if err := fsops.Move(tr, "/y", "/a/b/c/x", true); err != nil {
		t.Fatalf("mv --force over a file: %v", err)
	}
	if got := readVol(t, tr, "/a/b/c/x"); string(got) != "y" {
		t.Errorf("after mv over, /a/b/c/x holds %q", got)
	}
	if _, err := tr.Stat("/y"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("/y after mv: %v", err)
	}
	if err := fsops.Move(tr, "/a/b/c/x", "/a", false); err != nil {
		t.Fatalf("mv into a directory: %v", err)
	}
	if _, err := tr.Stat("/a/x"); err != nil {
		t.Errorf("/a/x after mv into /a: %v", err)
	}
	err = fsops.Move(tr, "/a/x", "/a", false)
	wantKind(t, "mv into the directory it is in", err, fsops.BadOperand)

	err = fsops.Remove(tr, []string{"/a"}, false)
	wantKind(t, "rm of a directory without -r", err, fsops.BadUsage)
	err = fsops.Remove(tr, []string{"/"}, true)
	wantKind(t, "rm of the root", err, fsops.BadUsage)
	if err := fsops.Remove(tr, []string{"/a"}, true); err != nil {
		t.Fatalf("rm -r: %v", err)
	}
	if ents, _ := tr.ReadDir("/"); len(ents) != 0 {
		t.Errorf("rm -r /a left %d entries in the root", len(ents))
	}
}

// TestPutFailureLeavesNothing: a copy that fails, or is stopped, removes
// its temporary name and leaves the file it would have replaced as it
// was; a stop says how far the put got.
func TestPutFailureLeavesNothing(t *testing.T) {
	tr := fatTree(t, 8<<20)
	src := localFile(t, "a.txt", []byte("new"))
	if err := fsops.Put(context.Background(), tr, fsops.PutOptions{Sources: []string{src}, Dest: "/a.txt"}); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("the source broke")
	failing := func(ctx context.Context, dst io.Writer, src io.Reader, _ int64) (int64, error) {
		dst.Write([]byte("part"))
		return 4, broken
	}
	err := fsops.Put(context.Background(), tr, fsops.PutOptions{Sources: []string{src}, Dest: "/a.txt", Force: true, Copy: failing})
	if !errors.Is(err, broken) {
		t.Fatalf("put with a failing copy: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopping := func(_ context.Context, dst io.Writer, src io.Reader, _ int64) (int64, error) {
		dst.Write([]byte("part"))
		cancel()
		return 4, context.Canceled
	}
	err = fsops.Put(ctx, tr, fsops.PutOptions{Sources: []string{src}, Dest: "/a.txt", Force: true, Copy: stopping})
	wantKind(t, "a stopped put", err, fsops.Interrupted)
	if !strings.Contains(err.Error(), "0 of 1 files copied; /a.txt partial, removed") {
		t.Errorf("a stopped put says %q", err)
	}
	if got := readVol(t, tr, "/a.txt"); string(got) != "new" {
		t.Errorf("after failed puts /a.txt holds %q", got)
	}
	noTemporaries(t, tr, "/")
}
