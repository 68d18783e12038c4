package exfat

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/cryptvol/cryptvol/internal/fattest"
)

// The property test (fattest.Property) runs thousands of random
// operations against the filesystem and a model; here are exFAT's names,
// case folding and checks. At the end fsck.exfat must accept the image
// and exfat-fuse must read every file back.

var modelUpcase = expandUpcase(defaultUpcase)

func foldName(s string) string { return modelUpcase.key(utf16.Encode([]rune(s))) }

var propNames = []string{"a", "File.TXT", "long name number", "Привет", "привет", "日本", "😀x", "x.y.z", "UPPER", "lower.txt", "MiXeD.Md", "n",
	strings.Repeat("a name of two hundred and twenty units ", 6)[:220]}

// TestPropertyRandomOps runs 2,000 random operations on each of two
// volumes (500 with -short); EXFAT_PROPERTY_STEPS sets another number for
// a long run (say 100000), EXFAT_PROPERTY_SEED another seed.
func TestPropertyRandomOps(t *testing.T) {
	steps, seed := fattest.PropertySteps(2000, "EXFAT_PROPERTY_STEPS", "EXFAT_PROPERTY_SEED")
	for _, c := range []struct {
		size    int64
		cluster int
	}{{2 << 20, 512}, {24 << 20, 4096}} {
		t.Run(fmt.Sprint(c.cluster), func(t *testing.T) {
			t.Logf("seed %d, %d steps (set EXFAT_PROPERTY_SEED, EXFAT_PROPERTY_STEPS for others)", seed, steps)
			propertyRun(t, c.size, c.cluster, steps, seed)
		})
	}
}

func propertyRun(t *testing.T, size int64, cluster, steps int, seed uint64) {
	dev := newMemDev(t, size)
	mustFormat(t, dev, size, FormatOptions{ClusterSize: cluster, Align: 4096})
	run := fattest.Property[*FS, *File, *FileInfo]{
		FS: mustOpen(t, dev, size), Rand: rand.New(rand.NewPCG(seed, uint64(cluster))),
		Steps: steps, MaxSize: int(size / 12), Names: propNames, Fold: foldName,
		NoSpace: ErrNoSpace, NotEmpty: ErrNotEmpty, CreateOpen: true, Verify: verify,
	}
	m := run.RunReopened(t, func() *FS { return mustOpen(t, dev, size) })
	needTools(t, "fsck.exfat")
	img := saveImage(t, dev)
	fsckClean(t, img)
	// A second reader: every file's content through exfat-fuse.
	want, dirs := m.Contents()
	checkTree(t, fuseMount(t, img, true), want, dirs)
}

// verify compares the filesystem with the model: contents, listings,
// Check, and free space against what the files and directories hold.
func verify(t *testing.T, fs *FS, m *fattest.Model, when string) {
	t.Helper()
	fattest.VerifyTree(t, fs, m, when)
	minDirs := uint32(len(m.Dirs))
	rep, err := fs.Check(false)
	if err != nil {
		t.Fatalf("%s: Check: %v", when, err)
	}
	st := fs.Statfs()
	fattest.VerifyUsage(t, m, when, rep.Clean(), rep, fattest.Usage{ClusterSize: fs.ClusterSize(),
		File: rep.FileClusters, Dir: rep.DirClusters, System: rep.SystemClusters, Open: rep.OpenClusters,
		Free: st.FreeClusters, Total: st.TotalClusters, MinDirs: minDirs})
}
