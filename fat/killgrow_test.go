package fat

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
)

// syncMemDev is a memDev with the Size and Sync a crashsim.Recorder needs.
type syncMemDev struct{ *memDev }

func (d syncMemDev) Size() int64 { return int64(len(d.Data)) }
func (d syncMemDev) Sync() error { return nil }

// openRecorded opens a copy of base (size bytes) through a recorder of
// its writes and flushes, for a test that replays its crash states.
func openRecorded(t *testing.T, base *memDev, size int64) (*memDev, *crashsim.Recorder, *FS) {
	t.Helper()
	work := newMemDev(t, size)
	copy(work.Data, base.Data)
	rec := crashsim.NewRecorder(syncMemDev{work})
	fs, err := OpenWithOptions(rec, size, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return work, rec, fs
}

// TestKilledWhileADirectoryGrows is the kill campaign's loss (CI, seed
// 441633812, put case 55 on vc32): a put into /photos grew the directory
// by a cluster whose FAT entry sits in a later FAT sector than the entry
// that links it. The link reached the disk first; the kill came before
// the new cluster's end mark. The recovery at the next open found the
// directory's chain running into a free cluster, did not read the
// directory at all, and freed the clusters of every file in it as lost:
// 1,640 clusters, four photos.
//
// Every state a kill can leave (each prefix of the writes) must recover,
// at a writable open, to a volume whose earlier files are all there, that
// our check finds without errors and fsck.fat -n finds clean.
func TestKilledWhileADirectoryGrows(t *testing.T) {
	_, fsckErr := exec.LookPath("fsck.fat")
	for _, c := range repairTypes {
		t.Run(c.typ.String(), func(t *testing.T) {
			base := newMemDev(t, c.size)
			mustFormat(t, base, c.size, FormatOptions{Type: c.typ, ClusterSize: c.cluster})
			fs := mustOpen(t, base, c.size)
			if err := fs.Mkdir("/photos"); err != nil {
				t.Fatal(err)
			}
			before := map[string][]byte{}
			slots := c.cluster / 32
			for i := 0; len(before) < slots/3-1; i++ {
				// Long names: three slots each, so the first
				// cluster of /photos is nearly full.
				name := fmt.Sprintf("/photos/Photo number %d.jpeg", i)
				before[name] = pattern(i, 3*c.cluster+i)
				mustWrite(t, fs, name, before[name])
			}
			// Clusters enough after /photos that its next cluster's
			// FAT entry falls in a later FAT sector than its first's.
			before["/filler.bin"] = pattern(99, 300*c.cluster)
			mustWrite(t, fs, "/filler.bin", before["/filler.bin"])
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}

			_, rec, fs := openRecorded(t, base, c.size)
			for i := 0; i < 3; i++ {
				mustWrite(t, fs, fmt.Sprintf("/photos/the new file number %d.bin", i), pattern(50+i, 2*c.cluster))
			}
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			ops := rec.Ops()
			kills := crashsim.KillStates(ops)
			failed := 0
			fail := func(s crashsim.State, err error) {
				failed++
				if failed <= 5 {
					t.Errorf("%s: %v", s.Name, err)
				}
			}
			for _, s := range kills {
				if err := judgeKillState(t, base.Data, s, before, fsckErr == nil); err != nil {
					fail(s, err)
				}
			}
			// A power cut may also lose any of the writes since the last
			// flush (this session has none before its end): the files
			// there before must survive the recovery, and a full repair
			// must leave no errors.
			cuts := crashsim.States(ops, crashsim.Options{Subsets: 20, Seed: 1})
			for _, s := range cuts {
				if err := judgeCutState(t, base.Data, s, before); err != nil {
					fail(s, err)
				}
			}
			t.Logf("%d writes, %d kill states, %d power-cut states, %d failed", crashsim.Writes(ops), len(kills), len(cuts), failed)
		})
	}
}

// judgeCutState opens state s of base writably (recovering it if it is
// marked dirty), checks that the files of before are intact, and then
// that Check(true) leaves no errors.
func judgeCutState(t *testing.T, base []byte, s crashsim.State, before map[string][]byte) error {
	m := newMemDev(t, int64(len(base)))
	copy(m.Data, base)
	if err := s.Apply(m); err != nil {
		return err
	}
	fs, err := OpenWithOptions(m, int64(len(base)), Options{})
	if err != nil {
		return fmt.Errorf("open (with recovery): %v", err)
	}
	defer fs.Close()
	if err := sameFiles(fs, before); err != nil {
		return err
	}
	rep, err := fs.Check(true)
	if err != nil {
		return fmt.Errorf("repair: %v", err)
	}
	if rep.After == nil || rep.After.Errors() {
		return fmt.Errorf("errors left after the repair:\n%s", rep)
	}
	return sameFiles(fs, before)
}

// judgeKillState recovers state s of base at a writable open and checks
// that the files of before are intact and the volume consistent.
func judgeKillState(t *testing.T, base []byte, s crashsim.State, before map[string][]byte, fsck bool) error {
	m := newMemDev(t, int64(len(base)))
	copy(m.Data, base)
	if err := s.Apply(m); err != nil {
		return err
	}
	fs, err := OpenWithOptions(m, int64(len(base)), Options{})
	if err != nil {
		return fmt.Errorf("open (with recovery): %v", err)
	}
	if err := sameFiles(fs, before); err != nil {
		fs.Close()
		return fmt.Errorf("after the recovery: %v", err)
	}
	rep, err := fs.Check(false)
	if err != nil {
		fs.Close()
		return fmt.Errorf("check after the recovery: %v", err)
	}
	if rep.Errors() {
		fs.Close()
		return fmt.Errorf("errors left after the recovery:\n%s", rep)
	}
	// The next change must be allowed.
	if err := fs.WriteFile("/photos/next.bin", []byte("next"), 0o644); err != nil {
		fs.Close()
		return fmt.Errorf("the next write after the recovery: %v", err)
	}
	if err := fs.Close(); err != nil {
		return err
	}
	if fsck {
		if out, err := exec.Command("fsck.fat", "-n", saveImage(t, m)).CombinedOutput(); err != nil {
			return fmt.Errorf("fsck.fat -n after the recovery: %v\n%s", err, out)
		}
	}
	return nil
}

// TestRecoveryKeepsTheFilesOfABrokenDirectory: whatever left a directory's
// chain running into a free cluster (an older cryptvol's grow, another
// system's crash), the recovery at a writable open must read what the
// directory's clusters hold, keep its files, and cut the chain at the
// break. (Before: the directory was not read, its files' clusters counted
// as lost and were freed.)
func TestRecoveryKeepsTheFilesOfABrokenDirectory(t *testing.T) {
	for _, c := range repairTypes[1:] { // FAT16 and FAT32 have a dirty flag
		t.Run(c.typ.String(), func(t *testing.T) {
			m := newMemDev(t, c.size)
			mustFormat(t, m, c.size, FormatOptions{Type: c.typ, ClusterSize: c.cluster})
			fs := mustOpen(t, m, c.size)
			if err := fs.Mkdir("/photos"); err != nil {
				t.Fatal(err)
			}
			before := map[string][]byte{}
			for i := 0; i < c.cluster/32; i++ {
				name := fmt.Sprintf("/photos/Photo number %d.jpeg", i)
				before[name] = pattern(i, c.cluster+i)
				mustWrite(t, fs, name, before[name])
			}
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			fs, err := OpenWithOptions(m, c.size, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			parent, e, _, err := fs.resolve("/photos")
			if err != nil {
				t.Fatal(err)
			}
			d, err := fs.openDir(parent, e)
			if err != nil {
				t.Fatal(err)
			}
			last, free := d.ch.Last(), fs.fat.count-3
			if d.ch.N < 3 || fs.fat.get(free) != 0 {
				t.Fatalf("/photos has %d clusters, cluster %d is %#x: not the state wanted", d.ch.N, free, fs.fat.get(free))
			}
			clean, _ := fs.fat.stateBits()
			fs.Close()
			// The first FAT copy only, as a cut-short flush leaves it.
			g, _ := parseBootSector(m.Data, c.size)
			raw := m.Data[g.fatCopyOffset(0) : g.fatCopyOffset(0)+g.fatSectors*int64(g.bytesPerSector)]
			tab := newFATTable(g, raw)
			tab.set(last, free)
			tab.setFlag(clean, false)
			fsckFinds(t, m, "free cluster")

			fs = mustOpen(t, m, c.size) // recovers
			if err := sameFiles(fs, before); err != nil {
				t.Fatalf("after the recovery: %v", err)
			}
			rep, err := fs.Check(false)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Clean() {
				t.Errorf("not clean after the recovery:\n%s", rep)
			}
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			fsckOK(t, m)
		})
	}
}
