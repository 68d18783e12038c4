package fat

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// TestShrink shrinks FAT16 and FAT32 filesystems made by mkfs.fat and
// written here: fsck.fat finds them clean, mtools and cryptvol read the
// files back, and the filesystem no longer reaches past the new size.
func TestShrink(t *testing.T) {
	needTools(t, "mkfs.fat", "fsck.fat", "mtype")
	for _, tc := range []struct {
		fat            string
		size, shrinkTo int64
	}{
		{"16", 32 << 20, 28<<20 + 4096},
		{"32", 64 << 20, 60 << 20},
	} {
		t.Run("FAT"+tc.fat, func(t *testing.T) {
			p, f := image(t, tc.size)
			if out, err := runTool(t, nil, "mkfs.fat", "-F", tc.fat, p); err != nil {
				t.Fatalf("mkfs.fat: %v\n%s", err, out)
			}
			fs := mustOpen(t, f, tc.size)
			data := pattern(1, 3<<20)
			mustWrite(t, fs, "/data.bin", data)
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := Shrink(f, tc.size, tc.shrinkTo)
			if err != nil {
				t.Fatal(err)
			}
			if got > tc.shrinkTo || got < tc.shrinkTo-64<<10 {
				t.Fatalf("shrunk to %d bytes, asked for %d", got, tc.shrinkTo)
			}
			f.Truncate(got)
			fsckClean(t, p)
			out, err := runTool(t, nil, "mtype", "-i", p, "::/data.bin")
			if err != nil || out != string(data) {
				t.Fatalf("mtype after the shrink: %v", err)
			}
			fs = mustOpen(t, f, got)
			if !bytes.Equal(mustRead(t, fs, "/data.bin"), data) {
				t.Fatal("the file changed")
			}
			// The space is still usable up to the new end.
			mustWrite(t, fs, "/more.bin", pattern(2, int(fs.Statfs().FreeBytes)))
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			fsckClean(t, p)
		})
	}
}

// TestShrinkRefuses: a cluster in use beyond the new end, and a FAT16
// volume that would have a FAT12 cluster count, are refused unchanged.
func TestShrinkRefuses(t *testing.T) {
	needTools(t, "mkfs.fat")
	p, f := image(t, 16<<20)
	if out, err := runTool(t, nil, "mkfs.fat", "-F", "16", p); err != nil {
		t.Fatalf("mkfs.fat: %v\n%s", err, out)
	}
	fs := mustOpen(t, f, 16<<20)
	mustWrite(t, fs, "/big.bin", pattern(3, 15<<20))
	fs.Close()
	before, _ := os.ReadFile(p)
	if _, err := Shrink(f, 16<<20, 14<<20); !errors.Is(err, ErrCannotShrink) {
		t.Fatalf("clusters in use past the end: %v", err)
	}
	p2, f2 := image(t, 8<<20)
	if out, err := runTool(t, nil, "mkfs.fat", "-F", "16", "-s", "1", p2); err != nil {
		t.Fatalf("mkfs.fat: %v\n%s", err, out)
	}
	if _, err := Shrink(f2, 8<<20, 1<<20); !errors.Is(err, ErrCannotShrink) {
		t.Fatalf("FAT16 to a FAT12 cluster count: %v", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
		t.Fatal("a refused shrink changed the image")
	}
}

// TestShrinkKeepsFAT32ClusterCount: Windows takes a FAT32 volume with
// fewer than 65,525 clusters for FAT16, so a shrink of a FAT32 volume
// above that count to below it is refused, unchanged; one made that small
// (mkfs.fat -F 32 of 64 MiB with 1 KiB clusters, then 512-byte) shrinks
// as asked.
func TestShrinkKeepsFAT32ClusterCount(t *testing.T) {
	needTools(t, "mkfs.fat", "fsck.fat")
	p, f := image(t, 80<<20)
	if out, err := runTool(t, nil, "mkfs.fat", "-F", "32", "-s", "2", "-S", "512", p); err != nil {
		t.Fatalf("mkfs.fat: %v\n%s", err, out)
	}
	fs := mustOpen(t, f, 80<<20)
	if n := fs.g.clusterCount; n <= fat16MaxClusters {
		t.Fatalf("mkfs.fat made %d clusters, want a FAT32 count", n)
	}
	fs.Close()
	before, _ := os.ReadFile(p)
	_, err := Shrink(f, 80<<20, 40<<20)
	if !errors.Is(err, ErrCannotShrink) {
		t.Fatalf("FAT32 to a FAT16 cluster count: %v", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, before) {
		t.Fatal("a refused shrink changed the image")
	}
	t.Log(err)
	if _, err := Shrink(f, 80<<20, 72<<20); err != nil {
		t.Fatalf("a shrink that keeps a FAT32 count: %v", err)
	}
	fsckClean(t, p)

	p2, f2 := image(t, 64<<20)
	if out, err := runTool(t, nil, "mkfs.fat", "-F", "32", "-s", "2", "-S", "512", p2); err != nil {
		t.Fatalf("mkfs.fat: %v\n%s", err, out)
	}
	if got, err := Shrink(f2, 64<<20, 48<<20); err != nil || got > 48<<20 {
		t.Fatalf("a FAT32 already below the FAT32 count: %d, %v", got, err)
	}
	fsckClean(t, p2)
}
