package conformance

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
)

// The images the suites run on, made and filled by the field's tools
// (mkfs.vfat and mtools, mkfs.exfat, mkfs.ext4 -d) or, for exFAT, by the
// writer through filesystem.Writer.

// NeedTool skips the test when one of the tools is not installed.
func NeedTool(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not installed (dosfstools, mtools, exfatprogs, e2fsprogs, ntfs-3g: .ci/run installs them)", n)
		}
	}
}

// Run runs a tool (with env added to the environment), failing the test
// with its output when it fails.
func Run(t testing.TB, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// SparseImage makes an empty image file of size bytes.
func SparseImage(t testing.TB, size int64) string {
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

// OpenImage opens img through filesystem.Open, read-only unless
// writable; the file and the filesystem are closed after the test.
func OpenImage(t testing.TB, img string, writable bool) filesystem.FS {
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

// ReadTree is the source every built image holds: io/fs name → content.
func ReadTree() map[string]string {
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

// WriteSource writes tree into a fresh host directory.
func WriteSource(t testing.TB, tree map[string]string) string {
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

// UTF8Env makes mtools read and write UTF-8 names.
var UTF8Env = []string{"LC_ALL=C.UTF-8"}

// FATImage makes a FAT image with mkfs.vfat and fills it with mtools.
func FATImage(t *testing.T, bits string, size int64, tree map[string]string) string {
	NeedTool(t, "mkfs.vfat", "mcopy")
	img := SparseImage(t, size)
	args := []string{"-F", bits, "-n", "CONFORM"}
	if bits == "32" {
		args = append(args, "-s", "1")
	}
	Run(t, nil, "mkfs.vfat", append(args, img)...)
	if tree != nil {
		src := WriteSource(t, tree)
		ents, _ := os.ReadDir(src)
		for _, e := range ents {
			Run(t, UTF8Env, "mcopy", "-s", "-m", "-i", img, filepath.Join(src, e.Name()), "::/")
		}
	}
	return img
}

// ExFATImage makes an exFAT image with mkfs.exfat and fills it through
// filesystem.Writer (exfat-fuse would need a loop device).
func ExFATImage(t *testing.T, size int64, tree map[string]string) string {
	NeedTool(t, "mkfs.exfat")
	img := SparseImage(t, size)
	Run(t, nil, "mkfs.exfat", "-L", "CONFORM", img)
	if tree != nil {
		w := OpenImage(t, img, true).(filesystem.Writer)
		for n, c := range tree {
			if d := filepath.Dir(n); d != "." {
				if err := MkdirAll(w, d); err != nil {
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

// Ext4Image makes an ext4 image with mkfs.ext4, filled from the tree
// with -d (e2fsprogs' own populate, no mount).
func Ext4Image(t *testing.T, size int64, tree map[string]string, links bool) string {
	NeedTool(t, "mkfs.ext4")
	img := SparseImage(t, size)
	args := []string{"-q", "-F", "-L", "conform"}
	if tree != nil {
		src := WriteSource(t, tree)
		if links {
			os.Symlink("small.txt", filepath.Join(src, "link"))
			os.Symlink("dir/sub", filepath.Join(src, "dirlink"))
			os.Link(filepath.Join(src, "small.txt"), filepath.Join(src, "dir", "hard"))
		}
		args = append(args, "-d", src)
	}
	Run(t, nil, "mkfs.ext4", append(args, img)...)
	return img
}

// WithLinks is tree with the links Ext4Image adds: TestFS does not
// follow the link to a directory (a link is no directory in io/fs), and
// a dangling link cannot be opened, so neither is in the list.
func WithLinks(tree map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range tree {
		out[k] = v
	}
	out["link"] = tree["small.txt"]
	out["dir/hard"] = tree["small.txt"]
	return out
}

// WithoutNonBMP is tree without the names that have characters outside
// the Basic Multilingual Plane.
func WithoutNonBMP(tree map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range tree {
		if !strings.ContainsFunc(k, func(r rune) bool { return r > 0xFFFF }) {
			out[k] = v
		}
	}
	return out
}
