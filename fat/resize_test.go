package fat

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
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
	_, fsckErr := exec.LookPath("fsck.fat")
	for _, c := range repairTypes {
		t.Run(c.typ.String(), func(t *testing.T) {
			room := c.size * 2
			base := newMemDev(t, room)
			mustFormat(t, base, c.size, FormatOptions{Type: c.typ, ClusterSize: c.cluster})
			fs := mustOpen(t, base, c.size)
			files := map[string][]byte{}
			for i := 0; i < 6; i++ {
				name := fmt.Sprintf("/f%d.bin", i)
				files[name] = pattern(i, int(c.size/40)+i*777)
				mustWrite(t, fs, name, files[name])
			}
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			grown := exploreResize(t, base, room, files, fsckErr == nil, func(d Device) (int64, error) { return Grow(d, c.size*3/2) })
			if grown <= c.size*5/4 {
				t.Fatalf("grew to %d bytes, want about %d", grown, c.size*3/2)
			}
			fsys, err := OpenWithOptions(base, room, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			least := fsys.UsedEnd() + int64(fsys.g.clusterSize)
			if c.typ == FAT16 {
				// FAT16's fewest clusters.
				least = max(least, fsys.g.dataOffset+(fat12MaxClusters+1)*int64(fsys.g.clusterSize))
			}
			fsys.Close()
			shrunk := exploreResize(t, base, room, files, fsckErr == nil, func(d Device) (int64, error) { return Shrink(d, room, least) })
			if shrunk > least {
				t.Fatalf("shrank to %d bytes, want at most %d", shrunk, least)
			}
			t.Logf("%s: %d → %d → %d bytes", c.typ, c.size, grown, shrunk)
		})
	}
}

type resizeSyncDev struct{ *memDev }

func (d resizeSyncDev) Size() int64 { return int64(len(d.Data)) }
func (d resizeSyncDev) Sync() error { return nil }

// exploreResize runs resize on a copy of base through a crashsim
// recorder, judges every crash state, applies the whole run to base and
// returns the size it made.
func exploreResize(t *testing.T, base *memDev, size int64, files map[string][]byte, fsck bool, resize func(Device) (int64, error)) int64 {
	t.Helper()
	before, err := OpenWithOptions(base, size, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	oldSize := before.g.fsBytes
	before.Close()
	work := newMemDev(t, size)
	copy(work.Data, base.Data)
	rec := crashsim.NewRecorder(resizeSyncDev{work})
	got, err := resize(rec)
	if err != nil {
		t.Fatal(err)
	}
	ops := rec.Ops()
	var writes []crashsim.Op
	for _, o := range ops {
		if !o.Flush {
			writes = append(writes, o)
		}
	}
	states := crashsim.States(ops, crashsim.Options{Subsets: 20, Torn: 4, Seed: 1})
	for k := 0; k < len(writes); k++ {
		states = append(states, crashsim.State{Name: fmt.Sprintf("killed before write %d of %d", k+1, len(writes)), Writes: writes[:k]})
	}
	failed := 0
	for _, s := range states {
		m := newMemDev(t, size)
		copy(m.Data, base.Data)
		if err := s.Apply(m); err != nil {
			t.Fatal(err)
		}
		fsys, err := OpenWithOptions(m, size, Options{ReadOnly: true})
		if err == nil {
			if n := fsys.g.fsBytes; n != oldSize && n != got {
				err = fmt.Errorf("declares %d bytes, neither the old %d nor the new %d", n, oldSize, got)
			} else {
				err = sameFiles(fsys, files)
			}
			fsys.Close()
		}
		if err != nil {
			if failed++; failed <= 5 {
				t.Errorf("%s: %v", s.Name, err)
			}
		}
	}
	copy(base.Data, work.Data)
	fsys, err := OpenWithOptions(base, size, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := fsys.Check(false)
	fsys.Close()
	if err != nil || rep.Errors() {
		t.Fatalf("our check of the result: %v\n%s", err, rep)
	}
	if fsck {
		fsckClean(t, saveImage(t, base))
	}
	t.Logf("%d → %d bytes: %d writes, %d crash states, %d failed", oldSize, got, len(writes), len(states), failed)
	return got
}
