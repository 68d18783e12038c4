package fat

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"github.com/cryptvol/cryptvol/internal/fattest"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// These tests damage volumes the ways issue 15 found (and the other ways
// fsck.fat knows), and check that nothing is lost, that writes are refused
// while cross-links are known, and that Check(true) repairs to fsck.fat's
// satisfaction. fsck.fat -n is the oracle that the damage is real before
// and gone after.

var repairTypes = []struct {
	size    int64
	typ     Type
	cluster int
}{{1 << 20, FAT12, 512}, {12 << 20, FAT16, 2048}, {40 << 20, FAT32, 512}}

// slotOf returns the device offset of the 8.3 slot of path.
func slotOf(t *testing.T, m *memDev, size int64, path string) int64 {
	t.Helper()
	fs, err := OpenWithOptions(m, size, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_, e, _, err := fs.resolve(path)
	if err != nil || e == nil {
		t.Fatalf("%s: %v", path, err)
	}
	return e.dir.slotOffset(e.slot)
}

func slotStart(b []byte, off int64) uint32 {
	return uint32(binary.LittleEndian.Uint16(b[off+20:]))<<16 | uint32(binary.LittleEndian.Uint16(b[off+26:]))
}

func setSlotStart(b []byte, off int64, c uint32) {
	binary.LittleEndian.PutUint16(b[off+20:], uint16(c>>16))
	binary.LittleEndian.PutUint16(b[off+26:], uint16(c))
}

// setFATAll writes FAT entry c = v into every FAT copy, for any FAT type.
func setFATAll(t *testing.T, m *memDev, size int64, c, v uint32) {
	t.Helper()
	g, err := parseBootSector(m.Data, size)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < g.numFATs; i++ {
		raw := m.Data[g.fatCopyOffset(i) : g.fatCopyOffset(i)+g.fatSectors*int64(g.bytesPerSector)]
		tab := &fatTable{typ: g.typ, raw: raw, count: g.clusterCount + 2, sectorSize: g.bytesPerSector,
			dirty: make([]uint64, len(raw)/g.bytesPerSector/64+1)}
		tab.set(c, v)
	}
}

// fsckFinds runs fsck.fat -n and fails unless it reports a problem
// matching want (the oracle that the damage made is real).
func fsckFinds(t *testing.T, m *memDev, want string) {
	t.Helper()
	if _, err := runTool(t, nil, "fsck.fat", "--help"); err != nil && !strings.Contains(err.Error(), "exit status") {
		return
	}
	out, err := runTool(t, nil, "fsck.fat", "-n", saveImage(t, m))
	if err == nil || !strings.Contains(out, want) {
		t.Errorf("fsck.fat -n does not report %q (%v):\n%s", want, err, out)
	}
}

// fsckOK runs fsck.fat -n and fails unless it exits 0.
func fsckOK(t *testing.T, m *memDev) {
	t.Helper()
	if _, err := runTool(t, nil, "fsck.fat", "--help"); err != nil && !strings.Contains(err.Error(), "exit status") {
		return
	}
	fsckClean(t, saveImage(t, m))
}

// fillDisk writes a file over all the free space, which would overwrite
// any cluster freed that was not free.
func fillDisk(t *testing.T, fs *FS, name string) []byte {
	t.Helper()
	st := fs.Statfs()
	b := pattern(99, int(st.FreeBytes)-st.ClusterSize)
	if err := fs.WriteFile(name, b, 0o644); err != nil {
		t.Fatalf("filling the disk: %v", err)
	}
	return b
}

// staleTwin makes the state an interrupted rename of an older cryptvol
// left: /stale.txt is a second entry pointing at /moved.txt's clusters,
// with no mark and no dirty flag.
func staleTwin(t *testing.T, size int64, typ Type, cluster int) (*memDev, []byte) {
	m := newMemDev(t, size)
	mustFormat(t, m, size, FormatOptions{Type: typ, ClusterSize: cluster})
	fs := mustOpen(t, m, size)
	data := pattern(11, 10*cluster+7)
	mustWrite(t, fs, "/moved.txt", data)
	mustWrite(t, fs, "/stale.txt", nil)
	mustWrite(t, fs, "/other.txt", pattern(12, 3*cluster))
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	from, to := slotOf(t, m, size, "/moved.txt"), slotOf(t, m, size, "/stale.txt")
	copy(m.Data[to+11:to+32], m.Data[from+11:from+32]) // everything but the name
	return m, data
}

// TestRemoveStaleTwin is the data loss: removing one of two names
// that share clusters freed the clusters, and the next put overwrote the
// other file. (Failed before: rm succeeded and /moved.txt was overwritten.)
func TestRemoveStaleTwin(t *testing.T) {
	for _, c := range repairTypes {
		t.Run(c.typ.String(), func(t *testing.T) {
			m, data := staleTwin(t, c.size, c.typ, c.cluster)
			fsckFinds(t, m, "share clusters")
			fs := mustOpen(t, m, c.size)
			err := fs.Remove("/stale.txt")
			if err == nil {
				fillDisk(t, fs, "/next.bin")
				if got := mustRead(t, fs, "/moved.txt"); !bytes.Equal(got, data) {
					t.Fatal("rm of the stale name freed the shared clusters and the next put overwrote /moved.txt")
				}
				t.Fatal("rm of a name sharing clusters with another succeeded")
			}
			if !errors.Is(err, ErrNeedsRepair) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("rm: %v, want ErrNeedsRepair", err)
			}
			t.Logf("rm: %v", err)
			// Every change is refused now, reads still work.
			if err := fs.WriteFile("/new.txt", []byte("x"), 0o644); !errors.Is(err, ErrNeedsRepair) {
				t.Errorf("put after a known cross-link: %v", err)
			}
			if err := fs.Mkdir("/d"); !errors.Is(err, ErrNeedsRepair) {
				t.Errorf("mkdir after a known cross-link: %v", err)
			}
			if err := fs.Rename("/other.txt", "/o.txt"); !errors.Is(err, ErrNeedsRepair) {
				t.Errorf("mv after a known cross-link: %v", err)
			}
			if got := mustRead(t, fs, "/moved.txt"); !bytes.Equal(got, data) {
				t.Fatal("/moved.txt damaged")
			}
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			// The next session knows without walking the tree: the
			// volume's own flag says so.
			fs = mustOpen(t, m, c.size)
			if fs.NeedsRepair() == nil {
				t.Error("the next Open does not know the volume needs repair")
			}
			if err := fs.WriteFile("/new.txt", []byte("x"), 0o644); !errors.Is(err, ErrNeedsRepair) {
				t.Errorf("put in the next session: %v", err)
			}
			rep, err := fs.Check(true)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("repair:\n%s", rep)
			if len(rep.CrossLinks) != 1 || rep.After == nil || !rep.After.Clean() {
				t.Fatalf("repair did not repair:\n%s", rep)
			}
			for _, p := range []string{"/moved.txt", "/stale.txt"} {
				if got := mustRead(t, fs, p); !bytes.Equal(got, data) {
					t.Errorf("%s lost its data in the repair", p)
				}
			}
			if err := fs.Remove("/stale.txt"); err != nil {
				t.Fatalf("rm after repair: %v", err)
			}
			fill := fillDisk(t, fs, "/next.bin")
			if got := mustRead(t, fs, "/moved.txt"); !bytes.Equal(got, data) {
				t.Error("/moved.txt overwritten after the repair")
			}
			if got := mustRead(t, fs, "/next.bin"); !bytes.Equal(got, fill) {
				t.Error("/next.bin damaged")
			}
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			fsckOK(t, m)
		})
	}
}

// TestMergedChains: two chains that run together in the FAT. Open sees
// it (the FAT is in memory) and refuses changes; Check(true) gives the
// second file its own copy of the shared clusters. (Failed before: writes
// were allowed and Check(true) left the cross-link.)
func TestMergedChains(t *testing.T) {
	for _, c := range repairTypes {
		t.Run(c.typ.String(), func(t *testing.T) {
			m := newMemDev(t, c.size)
			mustFormat(t, m, c.size, FormatOptions{Type: c.typ, ClusterSize: c.cluster})
			fs := mustOpen(t, m, c.size)
			a := pattern(21, 6*c.cluster)
			mustWrite(t, fs, "/a.bin", a)
			mustWrite(t, fs, "/b.bin", pattern(22, 3*c.cluster))
			fs.Close()
			aOff, bOff := slotOf(t, m, c.size, "/a.bin"), slotOf(t, m, c.size, "/b.bin")
			a0, b0 := slotStart(m.Data, aOff), slotStart(m.Data, bOff)
			// b's third cluster now leads into a's fourth: b is 3+3 clusters.
			setFATAll(t, m, c.size, b0+2, a0+3)
			binary.LittleEndian.PutUint32(m.Data[bOff+28:], uint32(6*c.cluster))
			fsckFinds(t, m, "share clusters")

			fs = mustOpen(t, m, c.size)
			wantB := append(append([]byte{}, mustRead(t, fs, "/b.bin")[:3*c.cluster]...), a[3*c.cluster:]...)
			if fs.NeedsRepair() == nil {
				t.Error("Open does not see chains running together")
			}
			if err := fs.WriteFile("/new.txt", []byte("x"), 0o644); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("put on a volume with merged chains: %v", err)
			}
			rep, err := fs.Check(true)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("repair:\n%s", rep)
			if rep.After == nil || !rep.After.Clean() {
				t.Fatalf("not clean after repair:\n%s", rep)
			}
			if got := mustRead(t, fs, "/a.bin"); !bytes.Equal(got, a) {
				t.Error("/a.bin changed")
			}
			if got := mustRead(t, fs, "/b.bin"); !bytes.Equal(got, wantB) {
				t.Error("/b.bin does not read as before the repair")
			}
			if err := fs.WriteFile("/new.txt", []byte("x"), 0o644); err != nil {
				t.Errorf("put after repair: %v", err)
			}
			fs.Close()
			fsckOK(t, m)
		})
	}
}

// badKinds are the bad entries issue 15 names, made from /dir/bad.txt.
var badKinds = []struct {
	name   string
	shown  string // the name it is listed under
	fsck   string // what fsck.fat -n says about it
	repair string // its name after Check(true)
	patch  func(b []byte, off int64, g *geometry)
}{
	{"size without a cluster", "bad.txt", "cluster chain length is 0", "bad.txt", func(b []byte, off int64, g *geometry) {
		setSlotStart(b, off, 0)
	}},
	{"slash in the short name", "b?d.txt", "Bad short file name", "b_d.txt", func(b []byte, off int64, g *geometry) {
		b[off+1] = '/'
	}},
	{"cluster beyond the volume", "bad.txt", "Start cluster beyond limit", "bad.txt", func(b []byte, off int64, g *geometry) {
		setSlotStart(b, off, g.clusterCount+10)
	}},
}

// TestBadEntry: one bad entry no longer makes its whole directory fail.
// (Failed before: ReadDir, WriteFile and Mkdir in /dir returned
// ErrCorrupt, and Remove of the entry said it does not exist.)
func TestBadEntry(t *testing.T) {
	for _, c := range repairTypes {
		for _, k := range badKinds {
			t.Run(c.typ.String()+"/"+k.name, func(t *testing.T) {
				m := newMemDev(t, c.size)
				mustFormat(t, m, c.size, FormatOptions{Type: c.typ, ClusterSize: c.cluster})
				fs := mustOpen(t, m, c.size)
				fs.Mkdir("/dir")
				good := pattern(31, 5000)
				mustWrite(t, fs, "/dir/good.txt", good)
				mustWrite(t, fs, "/dir/bad.txt", pattern(32, 3000))
				mustWrite(t, fs, "/dir/Another good one.txt", good)
				fs.Close()
				g, _ := parseBootSector(m.Data, c.size)
				k.patch(m.Data, slotOf(t, m, c.size, "/dir/bad.txt"), g)
				fsckFinds(t, m, k.fsck)
				damaged := bytes.Clone(m.Data)

				fs = mustOpen(t, m, c.size)
				ents, err := fs.ReadDir("/dir")
				if err != nil {
					t.Fatalf("ls of the directory: %v", err)
				}
				names := map[string]*FileInfo{}
				for _, e := range ents {
					names[e.Name()] = e.(*FileInfo)
				}
				if names["good.txt"] == nil || names["Another good one.txt"] == nil {
					t.Errorf("ls lost the good entries: %v", ents)
				}
				if fi := names[k.shown]; fi == nil || fi.Damage() == "" {
					t.Errorf("ls does not show %q marked as damaged: %v", k.shown, ents)
				} else {
					t.Logf("listed: %s (%s)", fi.Name(), fi.Damage())
				}
				if err := fs.WriteFile("/dir/new.txt", []byte("new"), 0o644); err != nil {
					t.Errorf("put into the directory: %v", err)
				}
				if err := fs.Mkdir("/dir/sub"); err != nil {
					t.Errorf("mkdir in the directory: %v", err)
				}
				rep, err := fs.Check(false)
				if err != nil || len(rep.BadEntries) == 0 {
					t.Errorf("Check does not report the bad entry: %v\n%s", err, rep)
				}
				if err := fs.Remove("/dir/" + k.shown); err != nil {
					t.Errorf("rm of the bad entry: %v", err)
				}
				if _, err := fs.Stat("/dir/" + k.shown); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the bad entry is still there: %v", err)
				}
				if got := mustRead(t, fs, "/dir/good.txt"); !bytes.Equal(got, good) {
					t.Error("good.txt damaged")
				}
				fs.Close()
				if rep, _ := mustOpen(t, m, c.size).Check(true); rep.After == nil || !rep.After.Clean() {
					t.Errorf("not clean after rm and repair:\n%s", rep)
				}
				fsckOK(t, m)

				// Repair of the untouched damage.
				m = &memDev{T: t, Data: damaged}
				fs = mustOpen(t, m, c.size)
				rep, err = fs.Check(true)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("repair:\n%s", rep)
				if rep.After == nil || !rep.After.Clean() {
					t.Errorf("not clean after repair:\n%s", rep)
				}
				if _, err := fs.Stat("/dir/" + k.repair); err != nil {
					t.Errorf("after repair: %v", err)
				}
				if k.repair != "bad.txt" {
					if got := mustRead(t, fs, "/dir/"+k.repair); !bytes.Equal(got, pattern(32, 3000)) {
						t.Error("the renamed file lost its data")
					}
				}
				if got := mustRead(t, fs, "/dir/Another good one.txt"); !bytes.Equal(got, good) {
					t.Error("a good file was damaged by the repair")
				}
				fs.Close()
				fsckOK(t, m)
			})
		}
	}
}

// TestRepairBrokenChains: the damage fsck.fat repairs by cutting, repaired
// here the same way. (Failed before: Check(true) reported these and
// repaired none.)
func TestRepairBrokenChains(t *testing.T) {
	for _, c := range repairTypes {
		for _, k := range []struct {
			name string
			fsck string
			make func(m *memDev, start uint32, off int64)
		}{
			{"loop", "Circular cluster chain", func(m *memDev, start uint32, off int64) {
				setFATAll(t, m, c.size, start+4, start+1)
			}},
			{"free cluster inside", "Contains a free cluster", func(m *memDev, start uint32, off int64) {
				setFATAll(t, m, c.size, start+3, 0)
			}},
			{"size beyond the chain", "cluster chain length is", func(m *memDev, start uint32, off int64) {
				binary.LittleEndian.PutUint32(m.Data[off+28:], uint32(40*c.cluster))
			}},
		} {
			t.Run(c.typ.String()+"/"+k.name, func(t *testing.T) {
				m := newMemDev(t, c.size)
				mustFormat(t, m, c.size, FormatOptions{Type: c.typ, ClusterSize: c.cluster})
				fs := mustOpen(t, m, c.size)
				mustWrite(t, fs, "/file.bin", pattern(41, 8*c.cluster))
				mustWrite(t, fs, "/ok.txt", []byte("fine"))
				fs.Close()
				off := slotOf(t, m, c.size, "/file.bin")
				k.make(m, slotStart(m.Data, off), off)
				fsckFinds(t, m, k.fsck)
				fs = mustOpen(t, m, c.size)
				rep, err := fs.Check(true)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("repair:\n%s", rep)
				if rep.After == nil || !rep.After.Clean() {
					t.Errorf("not clean after repair:\n%s", rep)
				}
				b, err := fs.ReadFile("/file.bin")
				if err != nil {
					t.Fatalf("the cut file cannot be read: %v", err)
				}
				if !bytes.Equal(b, pattern(41, 8*c.cluster)[:min(len(b), 8*c.cluster)]) {
					t.Error("the cut file does not start as it did")
				}
				if string(mustRead(t, fs, "/ok.txt")) != "fine" {
					t.Error("other file damaged")
				}
				fs.Close()
				fsckOK(t, m)
			})
		}
	}
}

// TestRepairDuplicatesAndOrphans: two entries with one name, an orphaned
// long-name slot, a directory whose ".." is wrong.
func TestRepairDuplicatesAndOrphans(t *testing.T) {
	for _, c := range repairTypes {
		t.Run(c.typ.String(), func(t *testing.T) {
			m := newMemDev(t, c.size)
			mustFormat(t, m, c.size, FormatOptions{Type: c.typ, ClusterSize: c.cluster})
			fs := mustOpen(t, m, c.size)
			mustWrite(t, fs, "/one.txt", pattern(51, 100))
			mustWrite(t, fs, "/two.txt", pattern(52, 200))
			mustWrite(t, fs, "/A long name that goes.txt", pattern(53, 300))
			fs.MkdirAll("/p/q")
			fs.Close()
			two := slotOf(t, m, c.size, "/two.txt")
			copy(m.Data[two:two+11], "ONE     TXT") // a second ONE.TXT
			long := slotOf(t, m, c.size, "/A long name that goes.txt")
			m.Data[long] = slotDeleted // its long-name slots are orphans now
			q := slotOf(t, m, c.size, "/p/q")
			g, _ := parseBootSector(m.Data, c.size)
			dotdot := g.clusterOffset(slotStart(m.Data, q)) + 32
			setSlotStart(m.Data, dotdot, slotStart(m.Data, q)) // ".." points at itself
			fsckFinds(t, m, "Duplicate directory entry")

			fs = mustOpen(t, m, c.size)
			rep, err := fs.Check(true)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("repair:\n%s", rep)
			if rep.OrphanLFN == 0 || rep.After == nil || !rep.After.Clean() {
				t.Errorf("not repaired:\n%s", rep)
			}
			ents, _ := fs.ReadDir("/")
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if got := fmt.Sprint(names); got != "[one (2).txt one.txt p]" {
				t.Errorf("root after repair: %s", got)
			}
			if !bytes.Equal(mustRead(t, fs, "/one (2).txt"), pattern(52, 200)) {
				t.Error("the renamed duplicate lost its data")
			}
			fs.Close()
			fsckOK(t, m)
		})
	}
}

// TestInterruptedRenameRecovery: a crash between the writes of a rename
// across directories leaves the marked source beside the new entry; Check
// on a read-only Open calls it an interrupted rename (not a cross-link),
// and a writable Open completes it.
func TestInterruptedRenameRecovery(t *testing.T) {
	for _, c := range repairTypes {
		t.Run(c.typ.String(), func(t *testing.T) {
			m := newMemDev(t, c.size)
			mustFormat(t, m, c.size, FormatOptions{Type: c.typ, ClusterSize: c.cluster})
			fs := mustOpen(t, m, c.size)
			data := pattern(61, 4*c.cluster)
			mustWrite(t, fs, "/src.txt", data)
			fs.Mkdir("/d")
			fs.Close()
			// Stop the rename just before it erases the source: count its
			// writes, then replay it one write short.
			probe := fattest.NewCrashDev(t, bytes.Clone(m.Data), fattest.NoCrash)
			pfs := mustOpen(t, probe, c.size)
			if err := pfs.Rename("/src.txt", "/d/dst.txt"); err != nil {
				t.Fatal(err)
			}
			before := probe.Writes
			pfs.Close()
			var img []byte
			for k := before - 1; k > 0; k-- {
				dev := fattest.NewCrashDev(t, bytes.Clone(m.Data), k)
				cfs := mustOpen(t, dev, c.size)
				cfs.Rename("/src.txt", "/d/dst.txt")
				ro, _ := OpenWithOptions(&memDev{T: t, Data: dev.Data}, c.size, Options{ReadOnly: true})
				_, e1 := ro.Stat("/src.txt")
				_, e2 := ro.Stat("/d/dst.txt")
				if e1 == nil && e2 == nil {
					img = dev.Data
					break
				}
			}
			if img == nil {
				t.Fatal("no crash point leaves both names")
			}
			ro, _ := OpenWithOptions(&memDev{T: t, Data: img}, c.size, Options{ReadOnly: true})
			rep, _ := ro.Check(false)
			if len(rep.CrossLinks) != 0 || len(rep.Interrupted) != 1 || !rep.Dirty {
				t.Errorf("Check after the crash:\n%s", rep)
			}
			fsckFinds(t, &memDev{T: t, Data: img}, "share clusters")
			dev := &memDev{T: t, Data: img}
			fs = mustOpen(t, dev, c.size)
			if r := fs.Recovery(); r == nil || !strings.Contains(r.String(), "completed the rename of /src.txt to /d/dst.txt") {
				t.Errorf("recovery: %v", r)
			}
			if _, err := fs.Stat("/src.txt"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the stale source survived recovery: %v", err)
			}
			if !bytes.Equal(mustRead(t, fs, "/d/dst.txt"), data) {
				t.Error("the moved file is damaged")
			}
			fs.Close()
			fsckOK(t, dev)
		})
	}
}

var repairRounds = flag.Int("fat.repairrounds", 40, "TestRepairRandomDamage: volumes damaged at random and repaired (try 2000)")

// TestRepairRandomDamage damages populated volumes at random (FAT entries,
// directory slots, whole directory clusters, one entry pointed at
// another's clusters) and requires Check(true) to leave a volume that
// Check and fsck.fat -n both find clean, without panicking or leaving the
// device. What cannot be repaired (a directory that lost its "." and "..")
// may remain, and must then be reported in After.
func TestRepairRandomDamage(t *testing.T) {
	haveFsck := true
	if _, err := runTool(t, nil, "fsck.fat", "--help"); err != nil && !strings.Contains(err.Error(), "exit status") {
		haveFsck = false
	}
	rounds := *repairRounds
	if testing.Short() && rounds == 40 {
		rounds = 12
	}
	for round := 0; round < rounds; round++ {
		c := repairTypes[round%len(repairTypes)]
		if c.typ == FAT32 && round%9 != 2 {
			c = repairTypes[round%2] // FAT32 volumes are 40 MiB: fewer of them
		}
		r := rand.New(rand.NewPCG(uint64(round), 15))
		m := newMemDev(t, c.size)
		mustFormat(t, m, c.size, FormatOptions{Type: c.typ, ClusterSize: c.cluster})
		fs := mustOpen(t, m, c.size)
		var files, dirs []string
		dirs = append(dirs, "/")
		for i := 0; i < 25; i++ {
			parent := dirs[r.IntN(len(dirs))]
			name := fmt.Sprintf("%s/%s %d", strings.TrimSuffix(parent, "/"), propNames[r.IntN(len(propNames))], i)
			if r.IntN(4) == 0 {
				if err := fs.Mkdir(name); err == nil {
					dirs = append(dirs, name)
				}
				continue
			}
			if err := fs.WriteFile(name, pattern(i, r.IntN(6*c.cluster)), 0o644); err == nil {
				files = append(files, name)
			}
		}
		fs.Close()
		g, _ := parseBootSector(m.Data, c.size)
		var what []string
		for k := 1 + r.IntN(4); k > 0; k-- {
			switch r.IntN(5) {
			case 0: // a FAT entry
				cl := 2 + uint32(r.IntN(int(g.clusterCount)/8+1))
				v := []uint32{0, cl + 1, 2 + uint32(r.IntN(int(g.clusterCount))), g.clusterCount + 7, 0x0FFFFFFF, 0x0FFFFFF7}[r.IntN(6)]
				setFATAll(t, m, c.size, cl, v)
				what = append(what, fmt.Sprintf("FAT[%d]=%#x", cl, v))
			case 1, 2: // a byte of an entry
				if len(files) == 0 {
					continue
				}
				p := files[r.IntN(len(files))]
				off := slotOfAny(m, c.size, p)
				if off < 0 {
					continue
				}
				i := []int{0, 1, 5, 11, 20, 21, 26, 27, 28, 29, 30}[r.IntN(11)]
				m.Data[off+int64(i)] = byte(r.Uint32())
				what = append(what, fmt.Sprintf("%s byte %d", p, i))
			case 3: // one entry pointed at another's clusters
				if len(files) < 2 {
					continue
				}
				a, b := files[r.IntN(len(files))], files[r.IntN(len(files))]
				oa, ob := slotOfAny(m, c.size, a), slotOfAny(m, c.size, b)
				if oa < 0 || ob < 0 || a == b {
					continue
				}
				copy(m.Data[ob+20:ob+22], m.Data[oa+20:oa+22])
				copy(m.Data[ob+26:ob+32], m.Data[oa+26:oa+32])
				what = append(what, fmt.Sprintf("%s shares %s", b, a))
			case 4: // a directory cluster of garbage
				if len(dirs) < 2 {
					continue
				}
				d := dirs[1+r.IntN(len(dirs)-1)]
				off := slotOfAny(m, c.size, d)
				if off < 0 {
					continue
				}
				start := slotStart(m.Data, off)
				if c.typ != FAT32 {
					start &= 0xFFFF
				}
				if start < 2 || start >= g.clusterCount+2 {
					continue
				}
				co := g.clusterOffset(start)
				for i := int64(64); i < int64(g.clusterSize); i++ {
					m.Data[co+i] = byte(r.Uint32())
				}
				what = append(what, d+" garbage")
			}
		}
		fs, err := Open(m, c.size)
		if err != nil {
			continue // the damage hit the root or the boot sector: nothing to repair
		}
		exercise := func() {
			for _, p := range files {
				fs.ReadFile(p)
			}
		}
		exercise()
		rep, err := fs.Check(true)
		if err != nil {
			t.Errorf("round %d (%s, %v): repair failed: %v", round, c.typ, what, err)
			continue
		}
		if rep.After == nil || !rep.After.Clean() {
			left := rep.After.String()
			if !strings.Contains(left, `missing "." or ".." entry`) {
				t.Errorf("round %d (%s, %v): not clean after repair:\n%s", round, c.typ, what, rep)
			}
			continue
		}
		fs.Close()
		if haveFsck {
			if out, err := runTool(t, nil, "fsck.fat", "-n", writeSparse(t, m.Data)); err != nil {
				if k := os.Getenv("DBG_KEEP"); k != "" {
					os.WriteFile(fmt.Sprintf("%s.%d", k, round), m.Data, 0o644)
				}
				t.Errorf("round %d (%s, %v): fsck.fat -n after repair: %v\n%s\nrepair:\n%s", round, c.typ, what, err, out, rep)
			}
		}
	}
}

// slotOfAny is slotOf for a volume that may be damaged: -1 when the path
// cannot be resolved.
func slotOfAny(m *memDev, size int64, path string) int64 {
	fs, err := OpenWithOptions(m, size, Options{ReadOnly: true})
	if err != nil {
		return -1
	}
	_, e, _, err := fs.resolve(path)
	if err != nil || e == nil {
		return -1
	}
	return e.dir.slotOffset(e.slot)
}

// TestCrossLinkRepairAgainstFsckFat repairs the same cross-linked volume
// twice, with fsck.fat -a and with Check(true), and reads the files back
// with mtools from both: fsck.fat -a truncates the second file to nothing
// (its documented choice), Check(true) keeps both whole; both results are
// clean for fsck.fat -n.
func TestCrossLinkRepairAgainstFsckFat(t *testing.T) {
	needTools(t, "fsck.fat", "mcopy")
	for _, c := range repairTypes {
		t.Run(c.typ.String(), func(t *testing.T) {
			m, data := staleTwin(t, c.size, c.typ, c.cluster)
			theirs := saveImage(t, &memDev{T: t, Data: bytes.Clone(m.Data)})
			if out, err := runTool(t, nil, "fsck.fat", "-a", theirs); err == nil || !strings.Contains(out, "share clusters") {
				t.Fatalf("fsck.fat -a did not find the cross-link (%v):\n%s", err, out)
			}
			fsckClean(t, theirs)
			fs := mustOpen(t, m, c.size)
			if _, err := fs.Check(true); err != nil {
				t.Fatal(err)
			}
			fs.Close()
			ours := saveImage(t, m)
			fsckClean(t, ours)
			read := func(img, p string) []byte {
				out, err := runTool(t, nil, "mcopy", "-n", "-i", img, "::"+p, "-")
				if err != nil {
					t.Fatalf("mcopy %s: %v %s", p, err, out)
				}
				return []byte(out)
			}
			for _, p := range []string{"/moved.txt", "/stale.txt"} {
				if !bytes.Equal(read(ours, p), data) {
					t.Errorf("after Check(true), mtools reads %s wrong", p)
				}
			}
			if !bytes.Equal(read(theirs, "/moved.txt"), data) || len(read(theirs, "/stale.txt")) != 0 {
				t.Errorf("fsck.fat -a no longer truncates the second file: update the doc comment of Check")
			}
		})
	}
}
