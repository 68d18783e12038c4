package conformance_test

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/conformance"
	"github.com/cryptvol/cryptvol/internal/fstree"
	"github.com/cryptvol/cryptvol/internal/testdata"
)

func needTool(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not installed (dosfstools, mtools, exfatprogs, e2fsprogs, ntfs-3g: .ci/run installs them)", n)
		}
	}
}

func run(t testing.TB, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// sparseImage makes an empty image file of size bytes.
func sparseImage(t testing.TB, size int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fs.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return p
}

// openImage opens img through filesystem.Open, read-only unless
// writable; the file and the filesystem are closed after the test.
func openImage(t testing.TB, img string, writable bool) filesystem.FS {
	t.Helper()
	flag := os.O_RDONLY
	if writable {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(img, flag, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fi, _ := f.Stat()
	fsys, err := filesystem.Open(f, fi.Size(), filesystem.Options{Writable: writable})
	if err != nil {
		t.Fatalf("Open %s: %v", img, err)
	}
	return fsys
}

// readTree is the source every built image holds: io/fs name → content.
func readTree() map[string]string {
	rng := rand.New(rand.NewSource(26))
	rnd := func(n int) string { b := make([]byte, n); rng.Read(b); return string(b) }
	return map[string]string{
		"small.txt":                 "hello, conformance\n",
		"empty":                     "",
		"medium.bin":                rnd(70_000),
		"dir/sub/deep.txt":          "deep\n",
		"dir/other.dat":             rnd(5000),
		"Übung.txt":                 "übung",
		"emoji 😀 name.txt":          "surrogate pair",
		"日本語.dat":                   rnd(3000),
		strings.Repeat("l", 200):    "long name",
		"dir/sub/more/than/ten.txt": "nested",
	}
}

// writeSource writes tree into a fresh host directory.
func writeSource(t testing.TB, tree map[string]string) string {
	t.Helper()
	src := t.TempDir()
	for n, c := range tree {
		p := filepath.Join(src, filepath.FromSlash(n))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

var utf8Env = []string{"LC_ALL=C.UTF-8"}

// fatImage makes a FAT image with mkfs.vfat and fills it with mtools.
func fatImage(t *testing.T, bits string, size int64, tree map[string]string) string {
	needTool(t, "mkfs.vfat", "mcopy")
	img := sparseImage(t, size)
	args := []string{"-F", bits, "-n", "CONFORM"}
	if bits == "32" {
		args = append(args, "-s", "1")
	}
	run(t, nil, "mkfs.vfat", append(args, img)...)
	if tree != nil {
		src := writeSource(t, tree)
		ents, _ := os.ReadDir(src)
		for _, e := range ents {
			run(t, utf8Env, "mcopy", "-s", "-m", "-i", img, filepath.Join(src, e.Name()), "::/")
		}
	}
	return img
}

// exfatImage makes an exFAT image with mkfs.exfat and fills it through
// filesystem.Writer (exfat-fuse would need a loop device).
func exfatImage(t *testing.T, size int64, tree map[string]string) string {
	needTool(t, "mkfs.exfat")
	img := sparseImage(t, size)
	run(t, nil, "mkfs.exfat", "-L", "CONFORM", img)
	if tree != nil {
		w := openImage(t, img, true).(filesystem.Writer)
		for n, c := range tree {
			if d := filepath.Dir(n); d != "." {
				if err := conformance.MkdirAll(w, d); err != nil {
					t.Fatal(err)
				}
			}
			f, err := w.Create(n)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write([]byte(c)); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return img
}

// ext4Image makes an ext4 image with mkfs.ext4, filled from the tree
// with -d (e2fsprogs' own populate, no mount).
func ext4Image(t *testing.T, size int64, tree map[string]string, links bool) string {
	needTool(t, "mkfs.ext4")
	img := sparseImage(t, size)
	args := []string{"-q", "-F", "-L", "conform"}
	if tree != nil {
		src := writeSource(t, tree)
		if links {
			os.Symlink("small.txt", filepath.Join(src, "link"))
			os.Symlink("dir/sub", filepath.Join(src, "dirlink"))
			os.Link(filepath.Join(src, "small.txt"), filepath.Join(src, "dir", "hard"))
		}
		args = append(args, "-d", src)
	}
	run(t, nil, "mkfs.ext4", append(args, img)...)
	return img
}

// withLinks is tree with the links ext4Image adds: TestFS does not
// follow the link to a directory (a link is no directory in io/fs), and
// a dangling link cannot be opened, so neither is in the list.
func withLinks(tree map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range tree {
		out[k] = v
	}
	out["link"] = tree["small.txt"]
	out["dir/hard"] = tree["small.txt"]
	return out
}

func withoutNonBMP(tree map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range tree {
		if !strings.ContainsFunc(k, func(r rune) bool { return r > 0xFFFF }) {
			out[k] = v
		}
	}
	return out
}

// TestReadConformance runs testing/fstest.TestFS and the content check
// on every filesystem, in images the field's tools made and filled.
func TestReadConformance(t *testing.T) {
	tree := readTree()
	// mtools drops characters outside the BMP from long names (it stores
	// "emoji  name.txt"): FAT's non-BMP names are covered by the write
	// suite, whose images fsck.vfat checks.
	fatTree := withoutNonBMP(tree)
	t.Run("FAT12", func(t *testing.T) {
		conformance.TestReads(t, openImage(t, fatImage(t, "12", 4<<20, fatTree), false), fatTree)
	})
	t.Run("FAT16", func(t *testing.T) {
		conformance.TestReads(t, openImage(t, fatImage(t, "16", 20<<20, fatTree), false), fatTree)
	})
	t.Run("FAT32", func(t *testing.T) {
		conformance.TestReads(t, openImage(t, fatImage(t, "32", 40<<20, fatTree), false), fatTree)
	})
	t.Run("exFAT", func(t *testing.T) {
		conformance.TestReads(t, openImage(t, exfatImage(t, 8<<20, tree), false), tree)
	})
	t.Run("ext4", func(t *testing.T) {
		conformance.TestReads(t, openImage(t, ext4Image(t, 8<<20, tree, true), false), withLinks(tree))
	})
	t.Run("NTFS", func(t *testing.T) {
		needTool(t, "mkntfs", "ntfs-3g")
		src := writeSource(t, tree)
		img := filepath.Join(t.TempDir(), "ntfs.img")
		fstree.MakeNTFS(t, img, src, 8<<20, nil, false)
		conformance.TestReads(t, openImage(t, img, false), tree)
	})
}

// openInMemory opens a copy of img held in memory, read-only: fstest
// reads every file a few bytes at a time, which on a file would be a
// system call per read.
func openInMemory(t testing.TB, img string) filesystem.FS {
	t.Helper()
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := filesystem.Open(bytes.NewReader(b), int64(len(b)), filesystem.Options{})
	if err != nil {
		t.Fatalf("Open %s: %v", img, err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

// TestReadConformanceCorpus runs the read suite on the real FAT and ext4
// images of cryptsetup's test suite, with what mtools and debugfs
// extract from them as the expected content.
func TestReadConformanceCorpus(t *testing.T) {
	t.Run("vfat", func(t *testing.T) {
		needTool(t, "mcopy")
		img := testdata.Unpack(t, "img_fs_vfat.img.xz")
		out := t.TempDir()
		run(t, utf8Env, "mcopy", "-s", "-n", "-i", img, "::/*", out)
		conformance.TestReads(t, openInMemory(t, img), hostTree(t, out))
	})
	t.Run("ext4", func(t *testing.T) {
		needTool(t, "debugfs")
		img := testdata.Unpack(t, "img_fs_ext4.img.xz")
		out := t.TempDir()
		run(t, nil, "debugfs", "-R", "rdump / "+out, img)
		conformance.TestReads(t, openInMemory(t, img), hostTree(t, out))
	})
}

// hostTree reads the regular files under dir.
func hostTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(dir, p)
			tree[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if len(tree) == 0 {
		t.Fatalf("nothing extracted into %s", dir)
	}
	return tree
}

// imageDevice is a Device over an image file, with external checker
// fsck (its arguments before the image's path).
func imageDevice(img string, fsck ...string) conformance.Device {
	return conformance.Device{
		Open: func(t *testing.T) filesystem.Writer {
			w, ok := openImage(t, img, true).(filesystem.Writer)
			if !ok {
				t.Fatalf("%s opened writable is not a filesystem.Writer", img)
			}
			return w
		},
		Check: func(t *testing.T) {
			t.Helper()
			out, err := exec.Command(fsck[0], append(fsck[1:], img)...).CombinedOutput()
			if err != nil {
				t.Errorf("%s: %v\n%s", strings.Join(fsck, " "), err, out)
			}
		},
	}
}

// TestWriteConformance runs the write-semantics suite on every writer.
func TestWriteConformance(t *testing.T) {
	for _, c := range []struct {
		name string
		tg   conformance.Target
	}{
		{"FAT12", conformance.Target{
			New: func(t *testing.T) conformance.Device {
				needTool(t, "fsck.vfat")
				return imageDevice(fatImage(t, "12", 2<<20, nil), "fsck.vfat", "-n")
			},
			TimeResolution: 2 * time.Second, CaseInsensitive: true,
		}},
		{"FAT16", conformance.Target{
			New: func(t *testing.T) conformance.Device {
				needTool(t, "fsck.vfat")
				return imageDevice(fatImage(t, "16", 9<<20, nil), "fsck.vfat", "-n")
			},
			TimeResolution: 2 * time.Second, CaseInsensitive: true,
		}},
		{"FAT32", conformance.Target{
			New: func(t *testing.T) conformance.Device {
				needTool(t, "fsck.vfat")
				return imageDevice(fatImage(t, "32", 34<<20, nil), "fsck.vfat", "-n")
			},
			TimeResolution: 2 * time.Second, CaseInsensitive: true,
		}},
		{"exFAT", conformance.Target{
			New: func(t *testing.T) conformance.Device {
				needTool(t, "fsck.exfat")
				return imageDevice(exfatImage(t, 4<<20, nil), "fsck.exfat", "-n")
			},
			TimeResolution: 10 * time.Millisecond, CaseInsensitive: true,
		}},
		{"ext4", conformance.Target{
			New: func(t *testing.T) conformance.Device {
				needTool(t, "e2fsck")
				return imageDevice(ext4Image(t, 4<<20, nil, false), "e2fsck", "-fn")
			},
			TimeResolution: time.Nanosecond, NameBytes: true,
		}},
	} {
		t.Run(c.name, func(t *testing.T) { conformance.TestWrites(t, c.tg) })
	}
}
