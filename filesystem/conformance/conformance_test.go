package conformance_test

import (
	"bytes"
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

// TestReadConformance runs testing/fstest.TestFS and the content check
// on every filesystem, in images the field's tools made and filled.
func TestReadConformance(t *testing.T) {
	tree := conformance.ReadTree()
	// mtools drops characters outside the BMP from long names (it stores
	// "emoji  name.txt"): FAT's non-BMP names are covered by the write
	// suite, whose images fsck.vfat checks.
	fatTree := conformance.WithoutNonBMP(tree)
	t.Run("FAT12", func(t *testing.T) {
		conformance.TestReads(t, conformance.OpenImage(t, conformance.FATImage(t, "12", 4<<20, fatTree), false), fatTree)
	})
	t.Run("FAT16", func(t *testing.T) {
		conformance.TestReads(t, conformance.OpenImage(t, conformance.FATImage(t, "16", 20<<20, fatTree), false), fatTree)
	})
	t.Run("FAT32", func(t *testing.T) {
		conformance.TestReads(t, conformance.OpenImage(t, conformance.FATImage(t, "32", 40<<20, fatTree), false), fatTree)
	})
	t.Run("exFAT", func(t *testing.T) {
		conformance.TestReads(t, conformance.OpenImage(t, conformance.ExFATImage(t, 8<<20, tree), false), tree)
	})
	t.Run("ext4", func(t *testing.T) {
		conformance.TestReads(t, conformance.OpenImage(t, conformance.Ext4Image(t, 8<<20, tree, true), false), conformance.WithLinks(tree))
	})
	t.Run("NTFS", func(t *testing.T) {
		conformance.NeedTool(t, "mkntfs", "ntfs-3g")
		src := conformance.WriteSource(t, tree)
		img := filepath.Join(t.TempDir(), "ntfs.img")
		fstree.MakeNTFS(t, img, src, 8<<20, nil, false)
		conformance.TestReads(t, conformance.OpenImage(t, img, false), tree)
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
		conformance.NeedTool(t, "mcopy")
		img := testdata.Unpack(t, "img_fs_vfat.img.xz")
		out := t.TempDir()
		conformance.Run(t, conformance.UTF8Env, "mcopy", "-s", "-n", "-i", img, "::/*", out)
		conformance.TestReads(t, openInMemory(t, img), hostTree(t, out))
	})
	t.Run("ext4", func(t *testing.T) {
		conformance.NeedTool(t, "debugfs")
		img := testdata.Unpack(t, "img_fs_ext4.img.xz")
		out := t.TempDir()
		conformance.Run(t, nil, "debugfs", "-R", "rdump / "+out, img)
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
			w, ok := conformance.OpenImage(t, img, true).(filesystem.Writer)
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
				conformance.NeedTool(t, "fsck.vfat")
				return imageDevice(conformance.FATImage(t, "12", 2<<20, nil), "fsck.vfat", "-n")
			},
			TimeResolution: 2 * time.Second, CaseInsensitive: true,
		}},
		{"FAT16", conformance.Target{
			New: func(t *testing.T) conformance.Device {
				conformance.NeedTool(t, "fsck.vfat")
				return imageDevice(conformance.FATImage(t, "16", 9<<20, nil), "fsck.vfat", "-n")
			},
			TimeResolution: 2 * time.Second, CaseInsensitive: true,
		}},
		{"FAT32", conformance.Target{
			New: func(t *testing.T) conformance.Device {
				conformance.NeedTool(t, "fsck.vfat")
				return imageDevice(conformance.FATImage(t, "32", 34<<20, nil), "fsck.vfat", "-n")
			},
			TimeResolution: 2 * time.Second, CaseInsensitive: true,
		}},
		{"exFAT", conformance.Target{
			New: func(t *testing.T) conformance.Device {
				conformance.NeedTool(t, "fsck.exfat")
				return imageDevice(conformance.ExFATImage(t, 4<<20, nil), "fsck.exfat", "-n")
			},
			TimeResolution: 10 * time.Millisecond, CaseInsensitive: true,
		}},
		{"ext4", conformance.Target{
			New: func(t *testing.T) conformance.Device {
				conformance.NeedTool(t, "e2fsck")
				return imageDevice(conformance.Ext4Image(t, 4<<20, nil, false), "e2fsck", "-fn")
			},
			TimeResolution: time.Nanosecond, NameBytes: true,
		}},
	} {
		t.Run(c.name, func(t *testing.T) { conformance.TestWrites(t, c.tg) })
	}
}
