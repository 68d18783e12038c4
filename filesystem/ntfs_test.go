package filesystem_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/fstree"
)

// TestNTFSFromNtfs3g checks the reader on volumes ntfs-3g filled: every
// file's name, size, time (100 ns), sha256, the symbolic links (ntfs-3g
// writes Interix ones) and hard links, compressed and sparse files, and
// Windows reparse-point links and junctions; label and serial against
// blkid, the listing against ntfsls.
func TestNTFSFromNtfs3g(t *testing.T) {
	for _, c := range []struct {
		name  string
		extra []string
		spec  fstree.Spec
	}{
		{"4k-clusters", nil, fstree.Spec{ManyFiles: 3000, LargeSize: 3 << 20, SparseTail: 5 << 20, Links: true}},
		{"512-clusters", []string{"-c", "512"}, fstree.Spec{ManyFiles: 300, LargeSize: 1 << 20, SparseTail: 3 << 20, Links: true}},
		{"64k-clusters-4k-sectors", []string{"-c", "65536", "-s", "4096"}, fstree.Spec{ManyFiles: 300, LargeSize: 1 << 20, SparseTail: 3 << 20, Links: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "src")
			os.Mkdir(src, 0o755)
			fstree.Build(t, src, c.spec)
			img := filepath.Join(dir, "ntfs.img")
			attrs := fstree.MakeNTFS(t, img, src, 96<<20, c.extra, true)
			if c.name != "64k-clusters-4k-sectors" && attrs["compress/text.txt"]&0x800 == 0 {
				t.Fatalf("ntfs-3g did not compress compress/text.txt (attributes %#x)", attrs["compress/text.txt"])
			}
			if attrs["sparse.bin"]&0x200 == 0 {
				t.Fatalf("ntfs-3g did not make sparse.bin sparse (attributes %#x)", attrs["sparse.bin"])
			}
			fsys := openImage(t, img)
			if fsys.Type() != "ntfs" || fsys.Label() != "Données" {
				t.Errorf("type %q label %q", fsys.Type(), fsys.Label())
			}
			if out, err := exec.Command("blkid", "-p", "-o", "value", "-s", "UUID", img).Output(); err == nil {
				if want := strings.TrimSpace(string(out)); fsys.ID() != want {
					t.Errorf("serial %s, blkid %s", fsys.ID(), want)
				}
			}
			// The Windows links are not in the source: check them, then
			// hide them from the tree comparison.
			checkWindowsLinks(t, fsys)
			fstree.Check(t, fsys, src, fstree.Options{TimeResolution: 100 * time.Nanosecond, NoDirTimes: true,
				Ignore: []string{"win-link", "win-abs-link", "junction"}})
			for _, d := range []string{"/", "/a", "/many", "/compress"} {
				checkNtfsls(t, fsys, img, d)
			}
			checkNTFSStatfs(t, fsys, img)
		})
	}
}

func checkWindowsLinks(t *testing.T, fsys filesystem.FS) {
	for _, c := range []struct{ name, target string }{
		{"win-link", "a/b/c/deep.txt"},
		{"win-abs-link", "C:/Windows/notepad.exe"},
		{"junction", "C:/Users/Public"},
	} {
		fi, err := fsys.Lstat(c.name)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("Lstat(%s) = %v, %v: want a symbolic link", c.name, fi, err)
			continue
		}
		if got, err := fsys.Readlink(c.name); got != c.target || err != nil {
			t.Errorf("Readlink(%s) = %q, %v; want %q", c.name, got, err, c.target)
		}
	}
	if b, err := readAll(fsys, "win-link"); err != nil || string(b) != "deep\n" {
		t.Errorf("reading through win-link: %q, %v", b, err)
	}
	if _, err := fsys.Stat("junction"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a junction to C:: %v, want fs.ErrNotExist", err)
	}
}

func readAll(fsys filesystem.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(f)
	return b.Bytes(), err
}

// checkNtfsls compares a directory's names with ntfsls's.
func checkNtfsls(t *testing.T, fsys filesystem.FS, img, dir string) {
	out := run(t, "ntfsls", "-p", dir, img)
	var want []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l != "" && l != "." && l != ".." {
			want = append(want, l)
		}
	}
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := fstree.Names(ents)
	wantSorted := append([]string{}, want...)
	sortStrings(wantSorted)
	if strings.Join(got, "\n") != strings.Join(wantSorted, "\n") {
		t.Errorf("%s: %d names, ntfsls %d; only here: %v; only in ntfsls: %v", dir, len(got), len(want), minus(got, wantSorted), minus(wantSorted, got))
	}
}

// checkNTFSStatfs compares the sizes with ntfsinfo -m.
func checkNTFSStatfs(t *testing.T, fsys filesystem.FS, img string) {
	out := run(t, "ntfsinfo", "-m", img)
	field := func(name string) int64 {
		for _, l := range strings.Split(out, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && strings.TrimSpace(k) == name {
				var n int64
				for _, c := range strings.TrimSpace(v) {
					if c < '0' || c > '9' {
						break
					}
					n = n*10 + int64(c-'0')
				}
				return n
			}
		}
		t.Fatalf("ntfsinfo -m: no %q\n%s", name, out)
		return 0
	}
	s := fsys.Statfs()
	cs := field("Cluster Size")
	if int64(s.BlockSize) != cs || s.TotalBytes != field("Volume Size in Clusters")*cs || s.FreeBytes != field("Free Clusters")*cs {
		t.Errorf("statfs %+v; ntfsinfo: cluster %d, %d clusters, %d free", s, cs, field("Volume Size in Clusters"), field("Free Clusters"))
	}
}

// minus returns the elements of a not in b.
func minus(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}
