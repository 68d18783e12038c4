package fat

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/cryptvol/cryptvol/internal/fattest"
)

// The property test (fattest.Property) runs thousands of random
// operations against the filesystem and a model; here are FAT's names,
// case folding and checks. At the end fsck.fat -n must accept the image.

var propNames = []string{"a", "File.TXT", "long name number", "Привет", "日本", "😀x", "x.y.z", "UPPER", "lower.txt", "MiXeD.Md", "n"}

func TestPropertyRandomOps(t *testing.T) {
	steps := 2500
	if testing.Short() {
		steps = 500
	}
	seed := uint64(1)
	if s := os.Getenv("FAT_PROPERTY_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	for _, c := range []struct {
		size    int64
		typ     Type
		cluster int
	}{{1 << 20, FAT12, 1024}, {12 << 20, FAT16, 2048}, {40 << 20, FAT32, 512}} {
		t.Run(c.typ.String(), func(t *testing.T) {
			t.Logf("seed %d (set FAT_PROPERTY_SEED to repeat another)", seed)
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
	m, noSpace := run.Run(t)
	if err := run.FS.Close(); err != nil {
		t.Fatal(err)
	}
	// A fresh Open sees the same tree.
	verify(t, mustOpen(t, dev, size), m, "after reopening")
	t.Logf("%d files, %d directories at the end; %d operations hit a full volume", len(m.Files), len(m.Dirs), noSpace)
	needTools(t, "fsck.fat")
	fsckClean(t, saveImage(t, dev))
}

// verify compares the filesystem with the model: contents, listings,
// Check, and free space against what the files and directories hold.
func verify(t *testing.T, fs *FS, m *fattest.Model, when string) {
	t.Helper()
	fattest.VerifyTree(t, fs, m, when)
	rep, err := fs.Check(false)
	if err != nil {
		t.Fatalf("%s: Check: %v", when, err)
	}
	if !rep.Clean() {
		t.Fatalf("%s: Check found:\n%s", when, rep)
	}
	cs := uint32(fs.ClusterSize())
	var need uint32
	for _, mf := range m.Files {
		need += (uint32(len(mf.Data)) + cs - 1) / cs
	}
	if rep.FileClusters != need {
		t.Fatalf("%s: files hold %d clusters, their sizes need %d", when, rep.FileClusters, need)
	}
	minDirs := uint32(len(m.Dirs) - 1)
	if fs.Type() == FAT32 {
		minDirs++
	}
	if rep.DirClusters < minDirs {
		t.Fatalf("%s: %d directory clusters for %d directories", when, rep.DirClusters, minDirs)
	}
	st := fs.Statfs()
	if used := rep.FileClusters + rep.DirClusters + rep.OpenClusters; st.FreeClusters != st.TotalClusters-used {
		t.Fatalf("%s: Statfs says %d free clusters; total %d - files %d - dirs %d - open removed files %d = %d", when,
			st.FreeClusters, st.TotalClusters, rep.FileClusters, rep.DirClusters, rep.OpenClusters, st.TotalClusters-used)
	}
}
