package fat

import (
	"math/rand/v2"
	"testing"

	"github.com/cryptvol/cryptvol/internal/fattest"
)

// The property test (fattest.Property) runs thousands of random
// operations against the filesystem and a model; here are FAT's names,
// case folding and checks. At the end fsck.fat -n must accept the image.

var propNames = []string{"a", "File.TXT", "long name number", "Привет", "日本", "😀x", "x.y.z", "UPPER", "lower.txt", "MiXeD.Md", "n"}

// TestPropertyRandomOps runs 2,500 random operations on each FAT type (500
// with -short); FAT_PROPERTY_STEPS sets another number for a long run,
// FAT_PROPERTY_SEED another seed.
func TestPropertyRandomOps(t *testing.T) {
	steps, seed := fattest.PropertySteps(2500, "FAT_PROPERTY_STEPS", "FAT_PROPERTY_SEED")
	for _, c := range []struct {
		size    int64
		typ     Type
		cluster int
	}{{1 << 20, FAT12, 1024}, {12 << 20, FAT16, 2048}, {40 << 20, FAT32, 512}} {
		t.Run(c.typ.String(), func(t *testing.T) {
			t.Logf("seed %d, %d steps (set FAT_PROPERTY_SEED, FAT_PROPERTY_STEPS for others)", seed, steps)
			propertyRun(t, c.size, c.typ, c.cluster, steps, seed)
		})
	}
}

func propertyRun(t *testing.T, size int64, typ Type, cluster, steps int, seed uint64) {
	dev := newMemDev(t, size)
	mustFormat(t, dev, size, FormatOptions{Type: typ, ClusterSize: cluster})
	run := fattest.Property[*FS, *File, *FileInfo]{
		FS: mustOpen(t, dev, size), Rand: rand.New(rand.NewPCG(seed, uint64(typ))),
		Steps: steps, MaxSize: int(size / 12), Names: propNames, Fold: foldName,
		NoSpace: ErrNoSpace, NotEmpty: ErrNotEmpty, Verify: verify,
	}
	run.RunReopened(t, func() *FS { return mustOpen(t, dev, size) })
	needTools(t, "fsck.fat")
	fsckClean(t, saveImage(t, dev))
}

// verify compares the filesystem with the model: contents, listings,
// Check, and free space against what the files and directories hold.
func verify(t *testing.T, fs *FS, m *fattest.Model, when string) {
	t.Helper()
	fattest.VerifyTree(t, fs, m, when)
	minDirs := uint32(len(m.Dirs) - 1) // the root has no cluster
	if fs.Type() == FAT32 {
		minDirs++ // but on FAT32 it does
	}
	rep, err := fs.Check(false)
	if err != nil {
		t.Fatalf("%s: Check: %v", when, err)
	}
	st := fs.Statfs()
	fattest.VerifyUsage(t, m, when, rep.Clean(), rep, fattest.Usage{ClusterSize: fs.ClusterSize(),
		File: rep.FileClusters, Dir: rep.DirClusters, Open: rep.OpenClusters,
		Free: st.FreeClusters, Total: st.TotalClusters, MinDirs: minDirs})
}
