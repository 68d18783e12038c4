package exfat

import (
	"fmt"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
	"github.com/cryptvol/cryptvol/internal/fattest"
)

// TestResizeCrashStates grows an exFAT filesystem with files by half (its
// FAT growing into the space before the aligned heap, its bitmap moved
// when its clusters hold too few bits), shrinks it to just
// above its files, and grows it by 10 % again, exploring every state a
// crash in each can leave (crashsim: every prefix of the writes, and for
// a power cut random subsets of the unflushed ones, torn at sectors).
// Every state must open read-only with every file intact and a cluster
// heap of the old or the new size (or, where the change takes steps, one
// between); each finished result must be clean
// for our check and for fsck.exfat -n. A shrink below a file is refused.
func TestResizeCrashStates(t *testing.T) {
	fsck := kit.HasFsck(t)
	// 512-byte clusters on 16 MiB: a bitmap of exactly 8 full clusters,
	// which a grow must move, and steps of 4096 clusters (the slack
	// of one cluster of bitmap).
	for _, c := range []struct {
		cluster int
		size    int64
	}{{512, 16 << 20}, {4096, 40 << 20}, {32768, 40 << 20}} {
		cluster, size := c.cluster, c.size
		t.Run(fmt.Sprint(cluster), func(t *testing.T) {
			room := size * 2
			base := newMemDev(t, room)
			mustFormat(t, base, size, FormatOptions{ClusterSize: cluster})
			files := fattest.ResizeFiles(t, mustOpen(t, base, size), size)
			grown := exploreResize(t, base, files, fsck, size*3/2)
			if grown != size*3/2 {
				t.Fatalf("grew to %d bytes, want %d", grown, size*3/2)
			}
			r, err := loadResizer(base, room)
			if err != nil {
				t.Fatal(err)
			}
			least := r.g.heapOffset + (r.lastUsed()+1)*int64(cluster)
			if _, err := Resize(base, room, least-int64(cluster)); err == nil {
				t.Fatal("a shrink below the last file was not refused")
			}
			shrunk := exploreResize(t, base, files, fsck, least)
			if shrunk > least {
				t.Fatalf("shrank to %d bytes, want at most %d", shrunk, least)
			}
			regrown := exploreResize(t, base, files, fsck, shrunk*11/10)
			t.Logf("cluster %d: %d → %d → %d → %d bytes", cluster, size, grown, shrunk, regrown)
		})
	}
}

// exploreResize explores the crash states of Resize to newSize on a copy
// of base (fattest.ExploreResize): a heap that grows or shrinks by more
// than one cluster of bitmap bits does it in steps, each a size between.
func exploreResize(t *testing.T, base *memDev, files map[string][]byte, fsck bool, newSize int64) int64 {
	t.Helper()
	r := fattest.ResizeRun[*FS]{
		Base: base, Files: files, Steps: true,
		Open:   func(m *memDev) (*FS, error) { return OpenWithOptions(m, int64(len(m.Data)), Options{ReadOnly: true}) },
		Extent: heapEnd,
		Resize: func(d crashsim.Device) (int64, error) { return Resize(d, int64(len(base.Data)), newSize) },
		Clean:  func(f *FS) error { return fattest.OwnCheck(f.Check(false)) },
	}
	if fsck {
		r.Fsck = func(t *testing.T, m *memDev) { fsckClean(t, saveImage(t, m)) }
	}
	return fattest.ExploreResize(t, r)
}

func heapEnd(fs *FS) int64 { return fs.g.heapOffset + int64(fs.g.clusterCount)<<fs.g.clusterShift }
