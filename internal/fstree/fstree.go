// Package fstree builds source trees that exercise a filesystem reader
// (sizes from 0 bytes to megabytes, sparse files, Unicode and long names,
// symbolic and hard links, a directory of thousands of entries) and checks
// that a filesystem.FS holds exactly such a tree: every name, type, size,
// modification time, link target, hard link and the sha256 of every file.
// Tests build images from the tree with the real tools (mkfs.ext4 -d,
// ntfs-3g) and read them back through the reader under test.
package fstree

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
)

// T is what the helpers need of a test: testing.TB has it, and so can
// an adapter for a testscript command.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

// Spec says what Build puts in the tree.
type Spec struct {
	// ManyFiles is the size of the directory "many" (thousands make ext4
	// use a hash tree and NTFS a multi-level index).
	ManyFiles int
	// LargeSize is the size of large.bin.
	LargeSize int
	// SparseTail places a last data chunk this far into sparse.bin (ext2
	// with 1 KiB blocks needs more than 64 MiB for triple indirection).
	SparseTail int64
	// Links adds symbolic links (fast and slow, to files and directories,
	// dangling, absolute) and hard links.
	Links bool
}

// LongName is a 255-byte name, the longest ext4 allows.
var LongName = strings.Repeat("n", 251) + ".txt"

// Build creates the tree in dir (which must exist) and returns it.
func Build(t T, dir string, s Spec) {
	t.Helper()
	rng := rand.New(rand.NewSource(17))
	random := func(n int) []byte { b := make([]byte, n); rng.Read(b); return b }
	write := func(name string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatalf("%v", err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatalf("%v", err)
		}
	}
	write("empty.txt", nil)
	write("small.txt", []byte("hello, world\n"))
	write("Übung.txt", []byte("übung"))
	write("日本語のファイル名.dat", random(4000))
	write("emoji 😀 name.txt", []byte("surrogate pair"))
	write(LongName, []byte("long name"))
	write("medium.bin", random(100_000))
	write("large.bin", random(s.LargeSize))
	write("a/b/c/deep.txt", []byte("deep\n"))
	write("a/b/Ölfeld/x", random(5000))
	write("compress/text.txt", bytes.Repeat([]byte("compressible text, "), 20000))
	write("compress/random.bin", random(70_000))
	for i := 0; i < s.ManyFiles; i++ {
		write(fmt.Sprintf("many/file-%05d.txt", i), []byte(fmt.Sprintf("content of file %d\n", i)))
	}
	// sparse.bin: data, a hole, data, a long hole, a data tail.
	sp, err := os.Create(filepath.Join(dir, "sparse.bin"))
	if err != nil {
		t.Fatalf("%v", err)
	}
	for _, at := range []int64{0, 1 << 20, s.SparseTail} {
		if _, err := sp.WriteAt(random(5000), at); err != nil {
			t.Fatalf("%v", err)
		}
	}
	if err := sp.Close(); err != nil {
		t.Fatalf("%v", err)
	}
	if s.Links {
		link := func(target, name string) {
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatalf("%v", err)
			}
		}
		link("small.txt", "link-fast")
		link("./"+strings.Repeat("a/../", 20)+"a/b/c/deep.txt", "link-slow") // > 60 bytes
		link("a/b", "link-dir")
		link("nowhere", "link-dangling")
		link("/a/b/c/deep.txt", "link-abs")
		link("../../small.txt", "a/b/link-up")
		if err := os.Link(filepath.Join(dir, "medium.bin"), filepath.Join(dir, "a", "hard-link.bin")); err != nil {
			t.Fatalf("%v", err)
		}
	}
	// Modification times with nanoseconds, before 1970 and far ahead.
	times := []time.Time{
		time.Date(1965, 3, 1, 12, 0, 0, 0, time.UTC),
		time.Date(2001, 9, 9, 1, 46, 40, 123456700, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 58, 999999900, time.UTC),
		time.Date(2037, 12, 31, 0, 0, 1, 500, time.UTC),
	}
	i := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		if !d.IsDir() {
			mt := times[i%len(times)]
			i++
			return os.Chtimes(p, mt, mt)
		}
		return nil
	})
}

// Options tune Check.
type Options struct {
	// TimeResolution is the step the filesystem keeps modification times
	// in (1 ns on ext4 with large inodes, 100 ns on NTFS, 1 s for images
	// mke2fs -d made: it copies whole seconds only).
	TimeResolution time.Duration
	// Ignore lists paths in the filesystem that the source does not have
	// (lost+found).
	Ignore []string
	// NoDirTimes skips directory times (copying a tree changes them).
	NoDirTimes bool
}

// Check compares the tree at src with the filesystem fsys, both ways.
func Check(t testing.TB, fsys filesystem.FS, src string, o Options) {
	t.Helper()
	n := 0
	inodes := map[uint64]uint64{} // source inode -> filesystem inode
	var walk func(rel string)
	walk = func(rel string) {
		lp := filepath.Join(src, filepath.FromSlash(rel))
		ents, err := os.ReadDir(lp)
		if err != nil {
			t.Fatalf("%v", err)
		}
		want := map[string]bool{}
		for _, e := range ents {
			want[e.Name()] = true
		}
		got, err := fsys.ReadDir("/" + rel)
		if err != nil {
			t.Errorf("ReadDir(%q): %v", "/"+rel, err)
			return
		}
		for _, e := range got {
			full := path.Join(rel, e.Name())
			if !want[e.Name()] && !ignored(full, o.Ignore) {
				t.Errorf("%s: in the filesystem, not in the source", full)
			}
			delete(want, e.Name())
		}
		for name := range want {
			t.Errorf("%s: in the source, not listed", path.Join(rel, name))
		}
		for _, e := range ents {
			full := path.Join(rel, e.Name())
			n++
			checkEntry(t, fsys, lp, full, e, o, inodes)
			if e.IsDir() {
				walk(full)
			}
		}
	}
	walk("")
	if n == 0 {
		t.Fatal("the source tree is empty")
	}
}

func ignored(p string, list []string) bool {
	for _, i := range list {
		if p == i {
			return true
		}
	}
	return false
}

func checkEntry(t testing.TB, fsys filesystem.FS, dir, full string, e fs.DirEntry, o Options, inodes map[uint64]uint64) {
	lfi, err := os.Lstat(filepath.Join(dir, e.Name()))
	if err != nil {
		t.Fatalf("%v", err)
	}
	fi, err := fsys.Lstat("/" + full)
	if err != nil {
		t.Errorf("Lstat(%q): %v", full, err)
		return
	}
	if fi.Mode().Type() != lfi.Mode().Type() {
		t.Errorf("%s: type %v, source %v", full, fi.Mode().Type(), lfi.Mode().Type())
		return
	}
	if fi.Name() != e.Name() {
		t.Errorf("%s: Lstat name %q", full, fi.Name())
	}
	switch {
	case lfi.Mode()&fs.ModeSymlink != 0:
		want, _ := os.Readlink(filepath.Join(dir, e.Name()))
		if got, err := fsys.Readlink("/" + full); err != nil || got != want {
			t.Errorf("Readlink(%s) = %q, %v; source %q", full, got, err, want)
		}
		return
	case lfi.IsDir():
		if !o.NoDirTimes {
			checkTime(t, full, fi.ModTime(), lfi.ModTime(), o)
		}
		return
	}
	checkTime(t, full, fi.ModTime(), lfi.ModTime(), o)
	if fi.Size() != lfi.Size() {
		t.Errorf("%s: size %d, source %d", full, fi.Size(), lfi.Size())
	}
	if ino, nlink, ok := sourceInode(lfi); ok && nlink > 1 {
		ii, ok := fi.Sys().(filesystem.InodeInfo)
		if !ok {
			t.Errorf("%s: hard-linked in the source, no inode number here", full)
		} else {
			if prev, seen := inodes[ino]; seen && prev != ii.Inode() {
				t.Errorf("%s: inode %d, its other name has %d", full, ii.Inode(), prev)
			}
			inodes[ino] = ii.Inode()
			if ii.Nlink() != nlink {
				t.Errorf("%s: %d links, source %d", full, ii.Nlink(), nlink)
			}
		}
	}
	want, err := hashFile(filepath.Join(dir, e.Name()))
	if err != nil {
		t.Fatalf("%v", err)
	}
	f, err := fsys.Open("/" + full)
	if err != nil {
		t.Errorf("Open(%s): %v", full, err)
		return
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Errorf("read %s: %v", full, err)
		return
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Errorf("%s: sha256 %s, source %s", full, got, want)
	}
}

func checkTime(t testing.TB, full string, got, want time.Time, o Options) {
	res := o.TimeResolution
	if res == 0 {
		res = time.Nanosecond
	}
	// Filesystems truncate to their resolution (toward the past).
	w := want.Add(-time.Duration(((want.UnixNano() % int64(res)) + int64(res)) % int64(res)))
	if !got.Equal(w) {
		t.Errorf("%s: mtime %v, source %v (resolution %v)", full, got.UTC(), want.UTC(), res)
	}
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// Names returns the sorted names of a directory listing.
func Names(ents []fs.DirEntry) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}
