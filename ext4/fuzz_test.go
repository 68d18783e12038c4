package ext4_test

import (
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/ext4"
)

// fuzzSize is the image every fuzz input is laid over (the input replaces
// its first bytes: superblock, group descriptors, inode table, directories).
const fuzzSize = 512 << 10

// fuzzSeeds makes small images with mkfs.ext4 -d in a few layouts.
func fuzzSeeds(f *testing.F) [][]byte {
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		return nil
	}
	dir := f.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(filepath.Join(src, "d", "e"), 0o755)
	os.WriteFile(filepath.Join(src, "small"), []byte("small file"), 0o644)
	os.WriteFile(filepath.Join(src, "d", "e", "big"), make([]byte, 70_000), 0o644)
	os.Symlink("d/e/big", filepath.Join(src, "link"))
	os.Symlink("d/e/../e/../e/../e/../e/../e/../e/../e/../e/../e/../e/../e/big", filepath.Join(src, "slowlink"))
	var seeds [][]byte
	for i, args := range [][]string{
		{"-b", "1024"},
		{"-b", "1024", "-O", "inline_data,^has_journal"},
		{"-t", "ext2", "-b", "1024", "-I", "128"},
	} {
		img := filepath.Join(dir, "img"+string(rune('0'+i)))
		a := append([]string{"-q", "-F", "-d", src, "-N", "64"}, args...)
		a = append(a, img, "512K")
		if out, err := exec.Command("mkfs.ext4", a...).CombinedOutput(); err != nil {
			f.Logf("mkfs.ext4 %v: %v\n%s", a, err, out)
			continue
		}
		b, err := os.ReadFile(img)
		if err == nil {
			seeds = append(seeds, b)
		}
	}
	return seeds
}

// committedSeeds are fuzzSeeds' images as made once here with mkfs.ext4,
// gzipped in testdata/fuzzseed: the target has real seeds on a machine
// without the tool too.
func committedSeeds(f *testing.F) [][]byte {
	names, _ := filepath.Glob("testdata/fuzzseed/*.img.gz")
	if len(names) == 0 {
		f.Fatal("no seeds in testdata/fuzzseed")
	}
	var seeds [][]byte
	for _, n := range names {
		fh, err := os.Open(n)
		if err != nil {
			f.Fatal(err)
		}
		zr, err := gzip.NewReader(fh)
		if err != nil {
			f.Fatal(n, err)
		}
		b, err := io.ReadAll(io.LimitReader(zr, fuzzSize))
		fh.Close()
		if err != nil {
			f.Fatal(n, err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

type memDev []byte

func (m memDev) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(m)) {
		return 0, io.EOF
	}
	n := copy(p, m[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// FuzzOpen feeds damaged images to Open and walks whatever it accepts:
// nothing may panic or hang, and errors must wrap the package's sentinels
// or io/fs ones. Without -fuzz it runs the seeds. Fuzz with
//
//	go test -run XXX -fuzz FuzzOpen -fuzzminimizetime 3s ./ext4/
func FuzzOpen(f *testing.F) {
	for _, s := range append(committedSeeds(f), fuzzSeeds(f)...) {
		f.Add(s)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		dev := make(memDev, fuzzSize)
		copy(dev, data)
		fsys, err := ext4.Open(dev, fuzzSize)
		if err != nil {
			if !errors.Is(err, ext4.ErrNotExt) && !errors.Is(err, ext4.ErrCorrupt) && !errors.Is(err, ext4.ErrUnsupported) {
				t.Fatalf("Open error wraps no sentinel: %v", err)
			}
			return
		}
		fsys.Statfs()
		seen := map[uint64]bool{}
		var walk func(dir string, depth int)
		walk = func(dir string, depth int) {
			ents, _ := fsys.ReadDir(dir)
			for _, e := range ents {
				p := path.Join(dir, e.Name())
				fi, err := fsys.Lstat(p)
				if err != nil {
					continue
				}
				ino := fi.Inode()
				if e.Type()&fs.ModeSymlink != 0 {
					fsys.Readlink(p)
					fsys.Stat(p)
				}
				if seen[ino] {
					continue
				}
				seen[ino] = true
				if fi.IsDir() && depth < 8 {
					walk(p, depth+1)
					continue
				}
				if file, err := fsys.Open(p); err == nil {
					buf := make([]byte, 64<<10)
					for off := int64(0); off < 1<<20; off += int64(len(buf)) {
						if _, err := file.ReadAt(buf, off); err != nil {
							break
						}
					}
					file.Close()
				}
			}
		}
		walk("/", 0)
	})
}
