//go:build linux || darwin

package mount

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/fat"
)

// step is one filesystem operation done with ordinary os calls, run
// against the mount and against a model directory on the host's own
// filesystem; both must end the same way.
type step struct {
	name string
	do   func(root string) error
}

// fileSteps exercises what people do with a folder: create, write, append,
// truncate, overwrite, rename (in place, across directories, over an
// existing file, directories), delete, times, many files, and unlinking a
// file that is still open.
func fileSteps() []step {
	big := randomBytes(3<<20 + 4321)
	small := []byte("hello, mounted volume\n")
	stamp := time.Date(2021, 6, 7, 8, 9, 10, 0, time.Local)
	many := make([][]byte, 60)
	for i := range many {
		many[i] = randomBytes(i * 97)
	}
	j := filepath.Join
	return []step{
		{"mkdir", func(r string) error { return os.Mkdir(j(r, "docs"), 0o755) }},
		{"mkdir -p", func(r string) error { return os.MkdirAll(j(r, "docs", "deep", "er"), 0o755) }},
		{"mkdir existing", func(r string) error { return os.Mkdir(j(r, "docs"), 0o755) }},
		{"write small", func(r string) error { return os.WriteFile(j(r, "hello.txt"), small, 0o644) }},
		{"write big in 1 MiB pieces with fsync", func(r string) error {
			f, err := os.Create(j(r, "docs", "big.bin"))
			if err != nil {
				return err
			}
			for off := 0; off < len(big); off += 1 << 20 {
				if _, err := f.Write(big[off:min(off+1<<20, len(big))]); err != nil {
					f.Close()
					return err
				}
			}
			if err := f.Sync(); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}},
		{"append", func(r string) error {
			for i := 0; i < 3; i++ {
				f, err := os.OpenFile(j(r, "hello.txt"), os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					return err
				}
				fmt.Fprintf(f, "appended line %d\n", i)
				if err := f.Close(); err != nil {
					return err
				}
			}
			return nil
		}},
		{"overwrite in the middle", func(r string) error {
			f, err := os.OpenFile(j(r, "docs", "big.bin"), os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt([]byte("PATCHED"), 1<<20-3)
			return err
		}},
		{"truncate shrink", func(r string) error { return os.Truncate(j(r, "docs", "big.bin"), 1234567) }},
		{"truncate grow", func(r string) error { return os.Truncate(j(r, "hello.txt"), 10000) }},
		{"ftruncate to zero and rewrite", func(r string) error {
			f, err := os.OpenFile(j(r, "docs", "deep", "note.txt"), os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := f.Write(bytes.Repeat([]byte("old "), 5000)); err != nil {
				return err
			}
			if err := f.Truncate(0); err != nil {
				return err
			}
			_, err = f.WriteAt([]byte("new content"), 0)
			return err
		}},
		{"O_TRUNC open", func(r string) error {
			return os.WriteFile(j(r, "docs", "deep", "note.txt"), []byte("rewritten with O_TRUNC"), 0o644)
		}},
		{"O_EXCL on existing", func(r string) error {
			f, err := os.OpenFile(j(r, "hello.txt"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"rename in place", func(r string) error { return os.Rename(j(r, "hello.txt"), j(r, "greeting.txt")) }},
		{"rename across directories", func(r string) error {
			return os.Rename(j(r, "docs", "big.bin"), j(r, "docs", "deep", "big.bin"))
		}},
		{"rename over an existing file", func(r string) error {
			if err := os.WriteFile(j(r, "victim.txt"), []byte("to be replaced"), 0o644); err != nil {
				return err
			}
			return os.Rename(j(r, "greeting.txt"), j(r, "victim.txt"))
		}},
		{"rename a directory", func(r string) error { return os.Rename(j(r, "docs", "deep"), j(r, "deep2")) }},
		{"rename a directory into itself", func(r string) error { return os.Rename(j(r, "deep2"), j(r, "deep2", "er", "x")) }},
		{"long unicode name", func(r string) error {
			return os.WriteFile(j(r, "deep2", "Übung mit einem ziemlich langen Namen.txt"), []byte("ü"), 0o644)
		}},
		{"remove a file", func(r string) error { return os.Remove(j(r, "victim.txt")) }},
		{"remove a missing file", func(r string) error { return os.Remove(j(r, "nothing.txt")) }},
		{"rmdir non-empty", func(r string) error { return syscall.Rmdir(j(r, "deep2")) }},
		{"unlink a directory", func(r string) error { return syscall.Unlink(j(r, "deep2")) }},
		{"rmdir empty", func(r string) error { return os.Remove(j(r, "deep2", "er")) }},
		{"rmdir a file", func(r string) error { return syscall.Rmdir(j(r, "deep2", "note.txt")) }},
		{"many files", func(r string) error {
			if err := os.Mkdir(j(r, "many"), 0o755); err != nil {
				return err
			}
			for i := 0; i < 60; i++ {
				if err := os.WriteFile(j(r, "many", fmt.Sprintf("file-%03d.dat", i)), many[i], 0o644); err != nil {
					return err
				}
			}
			return nil
		}},
		{"remove some of them", func(r string) error {
			for i := 0; i < 60; i += 3 {
				if err := os.Remove(j(r, "many", fmt.Sprintf("file-%03d.dat", i))); err != nil {
					return err
				}
			}
			return nil
		}},
		{"chtimes", func(r string) error { return os.Chtimes(j(r, "deep2", "note.txt"), stamp, stamp) }},
		{"unlink while open", func(r string) error {
			p := j(r, "doomed.bin")
			if err := os.WriteFile(p, []byte("still readable"), 0o644); err != nil {
				return err
			}
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := os.Remove(p); err != nil {
				return err
			}
			if _, err := f.WriteAt([]byte(" and writable"), 14); err != nil {
				return err
			}
			got := make([]byte, 27)
			if _, err := f.ReadAt(got, 0); err != nil {
				return err
			}
			if string(got) != "still readable and writable" {
				return fmt.Errorf("read back %q", got)
			}
			return nil
		}},
	}
}

// errClass reduces an error to its errno so the mount and the model can
// be compared.
func errClass(err error) string {
	if err == nil {
		return "ok"
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return en.Error()
	}
	return err.Error()
}

// tree is a directory's content: path -> file content ("/" suffix for
// directories), with modification times of files.
type tree struct {
	data  map[string]string
	mtime map[string]time.Time
}

func readTree(t *testing.T, root string) tree {
	t.Helper()
	tr := tree{data: map[string]string{}, mtime: map[string]time.Time{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			tr.data[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Size() != int64(len(b)) {
			return fmt.Errorf("%s: stat says %d bytes, read %d", rel, fi.Size(), len(b))
		}
		tr.data[rel] = string(b)
		tr.mtime[rel] = fi.ModTime()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func compareTrees(t *testing.T, what string, got, want tree) {
	t.Helper()
	var names []string
	for n := range want.data {
		names = append(names, n)
	}
	for n := range got.data {
		if _, ok := want.data[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	bad := 0
	for _, n := range names {
		g, gok := got.data[n]
		w, wok := want.data[n]
		switch {
		case !gok:
			t.Errorf("%s: %s is missing", what, n)
		case !wok:
			t.Errorf("%s: %s should not exist", what, n)
		case g != w:
			t.Errorf("%s: %s has %d bytes that differ from the %d expected", what, n, len(g), len(w))
		default:
			continue
		}
		if bad++; bad > 10 {
			t.Fatalf("%s: too many differences", what)
		}
	}
}

// TestFilesMountMatchesModel runs ordinary file operations on a mounted
// VeraCrypt volume and on a directory of the host, compares results and
// trees while mounted, then after unmounting checks the volume with three
// independent readers: the fat package, mtools (on the decrypted export)
// and fsck.fat -n.
func TestFilesMountMatchesModel(t *testing.T) {
	needFUSE(t)
	v, _ := newVolume(t, kinds[0], 48<<20)
	dir := mountDir(t)
	m, err := MountFiles(dir, v, Options{FsName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	model := t.TempDir()
	for _, s := range fileSteps() {
		gotErr, wantErr := errClass(s.do(dir)), errClass(s.do(model))
		if gotErr != wantErr {
			t.Errorf("%s: mount says %s, the host's filesystem %s", s.name, gotErr, wantErr)
		}
	}
	want := readTree(t, model)
	compareTrees(t, "while mounted", readTree(t, dir), want)

	// The kernel sees FAT's two-second modification times.
	fi, err := os.Stat(filepath.Join(dir, "deep2", "note.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if wantT := want.mtime["deep2/note.txt"]; !fi.ModTime().Equal(wantT) {
		t.Errorf("chtimes: mtime %v, want %v", fi.ModTime(), wantT)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Blocks == 0 || st.Bfree >= st.Blocks {
		t.Errorf("statfs: %d blocks, %d free", st.Blocks, st.Bfree)
	}

	if err := m.Unmount(); err != nil {
		t.Fatal(err)
	}
	if _, ok := IsMountPoint(dir); ok {
		t.Fatal("still mounted after Unmount")
	}

	// The fat package's view of the volume.
	ffs, err := fat.Open(v, v.Size())
	if err != nil {
		t.Fatal(err)
	}
	compareTrees(t, "fat package after unmount", fatTree(t, ffs), want)
	if rep, err := ffs.Check(false); err != nil || !rep.Clean() {
		t.Errorf("fat Check: %v %v", rep, err)
	}
	ffs.Close()

	// mtools and fsck.fat on the decrypted data area.
	img := export(t, v)
	fsckFAT(t, img)
	compareTrees(t, "mtools after unmount", mtoolsTree(t, img), want)
}

// fatTree reads a tree through the fat package.
func fatTree(t *testing.T, ffs *fat.FS) tree {
	t.Helper()
	tr := tree{data: map[string]string{}, mtime: map[string]time.Time{}}
	var walk func(p string)
	walk = func(p string) {
		ents, err := ffs.ReadDir(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			q := strings.TrimPrefix(p+"/"+e.Name(), "/")
			if e.IsDir() {
				tr.data[q+"/"] = ""
				walk("/" + q)
				continue
			}
			b, err := ffs.ReadFile("/" + q)
			if err != nil {
				t.Fatal(err)
			}
			tr.data[q] = string(b)
		}
	}
	walk("")
	return tr
}

// mtoolsTree copies everything out of a FAT image with mcopy -s (mtools:
// an implementation independent of ours) and reads the copy.
func mtoolsTree(t *testing.T, img string) tree {
	t.Helper()
	mcopy := needTool(t, "mcopy")
	out := t.TempDir()
	cmd := exec.Command(mcopy, "-s", "-n", "-m", "-i", img, "::/", out)
	cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mcopy: %v\n%s", err, b)
	}
	return readTree(t, out)
}

// TestFilesMountLargeIOUsesBigRequests checks that a 1 MiB write reaches
// the filesystem as one request, and reads come back in large pieces.
func TestFilesMountLargeIO(t *testing.T) {
	needFUSE(t)
	v, _ := newVolume(t, kinds[0], 32<<20)
	dir := mountDir(t)
	m, err := MountFiles(dir, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unmount()
	data := randomBytes(8 << 20)
	p := filepath.Join(dir, "stream.bin")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f, err = os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("read back different data")
	}
}

// TestFilesMountCoherence writes through a write-only handle (which
// bypasses the page cache) while another handle has the file cached, and
// checks the reader sees the new bytes and size, as on any local
// filesystem.
func TestFilesMountCoherence(t *testing.T) {
	needFUSE(t)
	v, _ := newVolume(t, kinds[0], 16<<20)
	dir := mountDir(t)
	m, err := MountFiles(dir, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, bytes.Repeat([]byte("a"), 100000), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100010)
	if n, _ := r.ReadAt(buf, 0); n != 100000 {
		t.Fatalf("first read: %d bytes", n)
	}
	w, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteAt(bytes.Repeat([]byte("b"), 5000), 1000)
	w.WriteAt([]byte("0123456789"), 100000)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	n, _ := r.ReadAt(buf, 0)
	fi, _ := r.Stat()
	r.Close()
	if err := m.Unmount(); err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("a"), 100000)
	copy(want[1000:], bytes.Repeat([]byte("b"), 5000))
	want = append(want, "0123456789"...)
	if n != len(want) || fi.Size() != int64(len(want)) || !bytes.Equal(buf[:n], want) {
		t.Fatalf("the cached reader sees %d bytes (stat %d), content equal %v; want %d new bytes",
			n, fi.Size(), bytes.Equal(buf[:n], want), len(want))
	}
}
