package ntfs_test

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

	"github.com/cryptvol/cryptvol/internal/fstree"
	"github.com/cryptvol/cryptvol/ntfs"
)

// fuzzSize is the device each input is laid over; inputs cover its first
// fuzzInput bytes, where mkntfs puts the boot sector, the MFT and (on a
// volume this small, with 512-byte clusters) the first files' data.
const (
	fuzzSize  = 2 << 20
	fuzzInput = 512 << 10
)

// fuzzSeeds makes an empty volume with mkntfs and, where ntfs-3g can
// mount here, one with files (compressed, sparse, linked, a directory
// with an index allocation).
func fuzzSeeds(f *testing.F) [][]byte {
	if _, err := exec.LookPath("mkntfs"); err != nil {
		return nil
	}
	dir := f.TempDir()
	var seeds [][]byte
	empty := filepath.Join(dir, "empty.img")
	os.WriteFile(empty, nil, 0o644)
	os.Truncate(empty, fuzzSize)
	if err := exec.Command("mkntfs", "-F", "-Q", "-q", "-c", "512", "-L", "seed", empty).Run(); err == nil {
		if b, err := os.ReadFile(empty); err == nil {
			seeds = append(seeds, b[:fuzzInput])
		}
	}
	if _, err := os.Stat("/dev/fuse"); err == nil && os.Geteuid() == 0 {
		if _, err := exec.LookPath("ntfs-3g"); err == nil {
			src := filepath.Join(dir, "src")
			os.MkdirAll(filepath.Join(src, "many"), 0o755)
			for i := 0; i < 60; i++ {
				os.WriteFile(filepath.Join(src, "many", "file with a long name "+string(rune('A'+i%26))+string(rune('a'+i/26))), []byte("x"), 0o644)
			}
			os.MkdirAll(filepath.Join(src, "compress"), 0o755)
			os.WriteFile(filepath.Join(src, "compress", "c.txt"), make([]byte, 20000), 0o644)
			os.WriteFile(filepath.Join(src, "Übung.txt"), []byte("ü"), 0o644)
			os.Symlink("Übung.txt", filepath.Join(src, "link"))
			os.Link(filepath.Join(src, "Übung.txt"), filepath.Join(src, "many", "hard"))
			img := filepath.Join(dir, "full.img")
			fstree.MakeNTFS(f, img, src, fuzzSize, []string{"-c", "512"}, true)
			if b, err := os.ReadFile(img); err == nil {
				seeds = append(seeds, b[:fuzzInput])
			}
		}
	}
	return seeds
}

// committedSeeds are fuzzSeeds' images as made once here with mkntfs (and ntfs-3g),
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

// FuzzOpen feeds damaged volumes to Open and walks whatever it accepts:
// nothing may panic or hang, and Open's errors wrap the package's
// sentinels. Without -fuzz it runs the seeds. Fuzz with
//
//	go test -run XXX -fuzz FuzzOpen -fuzzminimizetime 3s ./ntfs/
func FuzzOpen(f *testing.F) {
	for _, s := range append(committedSeeds(f), fuzzSeeds(f)...) {
		f.Add(s)
	}
	f.Add([]byte("\xebR\x90NTFS    "))
	f.Fuzz(func(t *testing.T, data []byte) {
		dev := make(memDev, fuzzSize)
		copy(dev, data[:min(len(data), fuzzInput)])
		fsys, err := ntfs.Open(dev, fuzzSize)
		if err != nil {
			if !errors.Is(err, ntfs.ErrNotNTFS) && !errors.Is(err, ntfs.ErrCorrupt) && !errors.Is(err, ntfs.ErrUnsupported) {
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
				if e.Type()&fs.ModeSymlink != 0 {
					fsys.Readlink(p)
					fsys.Stat(p)
				}
				if seen[fi.Inode()] {
					continue
				}
				seen[fi.Inode()] = true
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
