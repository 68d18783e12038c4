package fat

import (
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
	"github.com/cryptvol/cryptvol/internal/fattest"
)

// TestGrowShrinkCrashStates grows a FAT12, FAT16 and FAT32 filesystem
// with files by half (past its FAT's room: the copies are merged), then
// shrinks it back to just above its files, and explores every state a
// crash in each can leave (crashsim: every prefix of the writes, and for
// a power cut random subsets of the unflushed ones, torn at sectors).
// Every state must open read-only with every file intact and a size that
// is the old or the new one; the finished result must be clean for our
// check and for fsck.fat -n.
func TestGrowShrinkCrashStates(t *testing.T) {
	fsck := kit.HasFsck(t)
	for _, c := range repairTypes {
		t.Run(c.typ.String(), func(t *testing.T) {
			room := c.size * 2
			base := newMemDev(t, room)
			mustFormat(t, base, c.size, FormatOptions{Type: c.typ, ClusterSize: c.cluster})
			files := fattest.ResizeFiles(t, mustOpen(t, base, c.size), c.size)
			grown := exploreResize(t, base, files, fsck, func(d Device) (int64, error) { return Grow(d, c.size*3/2) })
			if grown <= c.size*5/4 {
				t.Fatalf("grew to %d bytes, want about %d", grown, c.size*3/2)
			}
			fsys, err := OpenWithOptions(base, room, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			least := fsys.UsedEnd() + int64(fsys.g.clusterSize)
			switch c.typ { // the type's fewest clusters
			case FAT16:
				least = max(least, fsys.g.dataOffset+(fat12MaxClusters+1)*int64(fsys.g.clusterSize))
			case FAT32:
				least = max(least, fsys.g.dataOffset+(fat16MaxClusters+1)*int64(fsys.g.clusterSize))
			}
			fsys.Close()
			shrunk := exploreResize(t, base, files, fsck, func(d Device) (int64, error) { return Shrink(d, room, least) })
			if shrunk > least {
				t.Fatalf("shrank to %d bytes, want at most %d", shrunk, least)
			}
			t.Logf("%s: %d → %d → %d bytes", c.typ, c.size, grown, shrunk)
		})
	}
}

// exploreResize explores the crash states of resize on a copy of base
// (fattest.ExploreResize): each declares the old or the new size.
func exploreResize(t *testing.T, base *memDev, files map[string][]byte, fsck bool, resize func(Device) (int64, error)) int64 {
	t.Helper()
	r := fattest.ResizeRun[*FS]{
		Base: base, Files: files,
		Open:   func(m *memDev) (*FS, error) { return OpenWithOptions(m, int64(len(m.Data)), Options{ReadOnly: true}) },
		Extent: func(f *FS) int64 { return f.g.fsBytes },
		Resize: func(d crashsim.Device) (int64, error) { return resize(d) },
		Clean:  func(f *FS) error { return fattest.OwnCheck(f.Check(false)) },
	}
	if fsck {
		r.Fsck = func(t *testing.T, m *memDev) { fsckClean(t, saveImage(t, m)) }
	}
	return fattest.ExploreResize(t, r)
}
