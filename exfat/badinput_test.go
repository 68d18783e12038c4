package exfat

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cryptvol/cryptvol/internal/fattest"
)

// damaged is a small volume with a contiguous file, a fragmented one and
// a directory, for the tests below to break in one place each.
type damaged struct {
	m    *memDev
	size int64
}

func newDamaged(t *testing.T) *damaged {
	const size = 8 << 20
	m := newMemDev(t, size)
	mustFormat(t, m, size, FormatOptions{ClusterSize: 512, Align: 4096})
	fs := mustOpen(t, m, size)
	fs.Mkdir("/dir")
	mustWrite(t, fs, "/dir/contiguous.bin", pattern(1, 5000))
	a, _ := fs.Create("/dir/fragmented.bin")
	for i := 0; i < 10; i++ {
		a.Write(pattern(i, 700))
		mustWrite(t, fs, "/dir/spacer"+string(rune('a'+i)), pattern(i, 100))
	}
	a.Close()
	mustWrite(t, fs, "/ok.txt", []byte("fine"))
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	return &damaged{m: m, size: size}
}

// entryOffset returns the device offset of the File entry of name.
func (d *damaged) entry(t *testing.T, name string) (off int64, e *entry, fs *FS) {
	t.Helper()
	fs = mustOpen(t, d.m, d.size)
	_, e, _, err := fs.resolve(name)
	if err != nil || e == nil {
		t.Fatalf("resolve %s: %v", name, err)
	}
	return e.dir.slotOffset(e.slot), e, fs
}

func expectCorrupt(t *testing.T, what string, err error) {
	t.Helper()
	fattest.ExpectCorrupt(t, ErrCorrupt, what, err)
}

func badEntries(r *CheckReport) int { return len(r.BadEntries) }

// repairs checks a damage that Check finds and Check(true) repairs: fsck.exfat
// -n sees it too beforehand (when oracle is set), and after the repair both
// find the volume clean, and ExitCode says 3 then 1 then 0.
func repairs(t *testing.T, d *damaged, oracle bool, found func(*CheckReport) bool) {
	t.Helper()
	if oracle && haveTool("fsck.exfat") {
		if out, err := runTool(t, nil, "fsck.exfat", "-n", saveImage(t, d.m)); err == nil {
			t.Errorf("fsck.exfat -n does not see the damage:\n%s", out)
		} else {
			t.Logf("fsck.exfat -n: %v", err)
		}
	}
	fs := mustOpen(t, d.m, d.size)
	r, err := fs.Check(false)
	if err != nil || !found(r) || r.ExitCode() != 3 {
		t.Fatalf("Check(false) (exit code %d): %v\n%s", r.ExitCode(), err, r)
	}
	r, err = fs.Check(true)
	if err != nil || len(r.Repaired) == 0 || r.ExitCode() != 1 {
		t.Fatalf("Check(true) (exit code %d): %v\n%s", r.ExitCode(), err, r)
	}
	t.Logf("%s", r)
	if r, err := fs.Check(false); err != nil || !r.Clean() || r.ExitCode() != 0 {
		t.Fatalf("after repair: %v\n%s", err, r)
	}
	if b := mustRead(t, fs, "/ok.txt"); string(b) != "fine" {
		t.Error("other file damaged")
	}
	fs.Close()
	if haveTool("fsck.exfat") {
		fsckClean(t, saveImage(t, d.m))
	}
}

func haveTool(name string) bool {
	_, err := lookPath(name)
	return err == nil
}

func TestRepairChecksum(t *testing.T) {
	d := newDamaged(t)
	off, _, _ := d.entry(t, "/dir/contiguous.bin")
	d.m.Data[off+2] ^= 0x55 // SetChecksum
	repairs(t, d, true, func(r *CheckReport) bool { return len(r.BadChecksums) == 1 })
}

func TestRepairNameHash(t *testing.T) {
	d := newDamaged(t)
	off, _, _ := d.entry(t, "/ok.txt")
	d.m.Data[off+32+4] ^= 0x01 // NameHash, then the checksum made right again
	set := d.m.Data[off : off+3*32]
	binary.LittleEndian.PutUint16(set[2:], entryChecksum(set))
	repairs(t, d, false, func(r *CheckReport) bool { return len(r.BadChecksums) == 1 })
}

func TestRepairBitmap(t *testing.T) {
	d := newDamaged(t)
	_, e, fs := d.entry(t, "/dir/contiguous.bin")
	// One cluster of the file marked free, and two free ones marked used.
	bmOff := fs.g.clusterOffset(fs.bitmapCh.First())
	i := e.start + 1 - 2
	d.m.Data[bmOff+int64(i/8)] &^= 1 << (i % 8)
	last := fs.g.clusterCount - 1
	d.m.Data[bmOff+int64(last/8)] |= 1 << (last % 8)
	d.m.Data[bmOff+int64((last-1)/8)] |= 1 << ((last - 1) % 8)
	repairs(t, d, true, func(r *CheckReport) bool { return len(r.Unmarked) == 1 && r.LostClusters == 2 })
}

func TestRepairOrphanSecondary(t *testing.T) {
	d := newDamaged(t)
	off, _, _ := d.entry(t, "/dir/contiguous.bin")
	d.m.Data[off] &^= entryInUse // the File entry alone is marked unused
	// fsck.exfat -n reports "unknown entry type" for these, and exits 0.
	repairs(t, d, false, func(r *CheckReport) bool { return r.OrphanEntries == 2 && r.LostClusters == 10 })
}

func TestRepairBootRegion(t *testing.T) {
	d := newDamaged(t)
	d.m.Data[offClusterCount] ^= 0xFF // the checksum no longer matches
	fs := mustOpen(t, d.m, d.size)
	if b := mustRead(t, fs, "/ok.txt"); string(b) != "fine" {
		t.Error("reading through the backup boot region")
	}
	if err := fs.WriteFile("/x", nil, 0o644); !errors.Is(err, ErrReadOnly) {
		t.Errorf("writing while on the backup boot region: %v", err)
	}
	repairs(t, d, true, func(r *CheckReport) bool { return len(r.BootProblems) == 1 })
}

func TestCrossLinkReported(t *testing.T) {
	d := newDamaged(t)
	off, e, fs := d.entry(t, "/ok.txt")
	_, c, _ := d.entry(t, "/dir/contiguous.bin")
	_ = fs
	// /ok.txt claims the contiguous file's second cluster.
	binary.LittleEndian.PutUint32(d.m.Data[off+32+20:], c.start+1)
	set := d.m.Data[off : off+int64(e.nslots)*32]
	binary.LittleEndian.PutUint16(set[2:], entryChecksum(set))
	fs = mustOpen(t, d.m, d.size)
	r, err := fs.Check(true)
	if err != nil || len(r.CrossLinks) != 1 || !r.Errors() || r.ExitCode() != 3 {
		t.Fatalf("Check(true): %v (exit code %d)\n%s", err, r.ExitCode(), r)
	}
}

func TestLoopingChain(t *testing.T) {
	d := newDamaged(t)
	_, e, fs := d.entry(t, "/dir/fragmented.bin")
	if e.noFatChain() {
		t.Fatal("fragmented file is contiguous")
	}
	// The file's second cluster links back to its first.
	second := fs.fat.get(e.start)
	binary.LittleEndian.PutUint32(d.m.Data[fs.g.fatOffset+int64(4*second):], e.start)
	fs = mustOpen(t, d.m, d.size)
	fattest.RefusesDamagedFile(t, fs, "/dir/fragmented.bin", ErrCorrupt, badEntries)
}

func TestGarbageDirectory(t *testing.T) {
	d := newDamaged(t)
	_, e, fs := d.entry(t, "/dir")
	off := fs.g.clusterOffset(e.start)
	for i := int64(0); i < 512; i += 32 {
		d.m.Data[off+i] = 0x9F // an unknown critical primary entry
	}
	fs = mustOpen(t, d.m, d.size)
	fattest.RefusesDamagedDir(t, fs, "/dir", ErrCorrupt, nil)
}

func TestNotExFAT(t *testing.T) {
	m := newMemDev(t, 8<<20)
	if _, err := Open(m, 8<<20); !errors.Is(err, ErrNotExFAT) {
		t.Errorf("zeros: %v", err)
	}
	if _, err := Open(m, 100); !errors.Is(err, ErrNotExFAT) {
		t.Errorf("tiny: %v", err)
	}
}

// exercise walks, reads, checks and writes whatever Open accepted
// (fattest.Exercise).
func exercise(t testing.TB, fs *FS) {
	fattest.Exercise[*File, *FileInfo, *CheckReport, Statfs](t, fs)
}
