package exfat

import (
	"bytes"
	"fmt"
	"os/exec"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
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
	_, fsckErr := exec.LookPath("fsck.exfat")
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
			fs := mustOpen(t, base, size)
			files := map[string][]byte{}
			for i := 0; i < 6; i++ {
				name := fmt.Sprintf("/f%d.bin", i)
				files[name] = pattern(i, int(size/40)+i*777)
				mustWrite(t, fs, name, files[name])
			}
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			grown := exploreResize(t, base, room, files, fsckErr == nil, size*3/2)
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
			shrunk := exploreResize(t, base, room, files, fsckErr == nil, least)
			if shrunk > least {
				t.Fatalf("shrank to %d bytes, want at most %d", shrunk, least)
			}
			regrown := exploreResize(t, base, room, files, fsckErr == nil, shrunk*11/10)
			t.Logf("cluster %d: %d → %d → %d → %d bytes", cluster, size, grown, shrunk, regrown)
		})
	}
}

type resizeSyncDev struct{ *memDev }

func (d resizeSyncDev) Size() int64 { return int64(len(d.Data)) }
func (d resizeSyncDev) Sync() error { return nil }

func heapEnd(fs *FS) int64 { return fs.g.heapOffset + int64(fs.g.clusterCount)<<fs.g.clusterShift }

// exploreResize runs Resize to newSize on a copy of base through a
// crashsim recorder, judges every crash state, applies the whole run to
// base and returns the size it made.
func exploreResize(t *testing.T, base *memDev, size int64, files map[string][]byte, fsck bool, newSize int64) int64 {
	t.Helper()
	before, err := OpenWithOptions(base, size, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	oldEnd := heapEnd(before)
	before.Close()
	work := newMemDev(t, size)
	copy(work.Data, base.Data)
	rec := crashsim.NewRecorder(resizeSyncDev{work})
	got, err := Resize(rec, size, newSize)
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
			if n := heapEnd(fsys); n < min(oldEnd, got) || n > max(oldEnd, got) {
				// A grow or shrink of more than one cluster of bitmap
				// bits is done in steps, each a size between.
				err = fmt.Errorf("the heap ends at %d, outside the old %d to the new %d", n, oldEnd, got)
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
	if err == nil && !rep.Errors() {
		err = sameFiles(fsys, files)
	}
	fsys.Close()
	if err != nil || rep.Errors() {
		t.Fatalf("the result: %v\n%v", err, rep)
	}
	if fsck {
		fsckClean(t, saveImage(t, base))
	}
	t.Logf("%d → %d bytes: %d writes, %d crash states, %d failed", oldEnd, got, len(writes), len(states), failed)
	return got
}

func sameFiles(fs *FS, files map[string][]byte) error {
	for name, want := range files {
		got, err := fs.ReadFile(name)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s changed", name)
		}
	}
	return nil
}
