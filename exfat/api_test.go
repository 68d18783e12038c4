package exfat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/fattest"
)

func newTestFS(t *testing.T, size int64) (*FS, *memDev) {
	t.Helper()
	m := newMemDev(t, size)
	mustFormat(t, m, size, FormatOptions{Label: "API"})
	return mustOpen(t, m, size), m
}

func TestIOFS(t *testing.T) {
	fs, _ := newTestFS(t, 8<<20)
	fattest.IOFSConformance(t, fs)
}

func TestFileSemantics(t *testing.T) {
	fs, m := newTestFS(t, 8<<20)
	fattest.FileSemantics[*File, *FileInfo](t, fs)
	if err := fs.Mkdir("/f.txt/x"); !errors.Is(err, ErrNotDir) {
		t.Errorf("mkdir under a file: %v", err)
	}
	if err := fs.WriteFile("/bad:name", nil, 0o644); !errors.Is(err, ErrInvalidName) {
		t.Errorf("bad name: %v", err)
	}
	if err := fs.Mkdir("/d"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, fs, "/d/x", []byte("x"))
	if err := fs.Remove("/d"); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("remove non-empty: %v", err)
	}
	// Case-insensitive through the up-case table, beyond ASCII too.
	mustWrite(t, fs, "/Ёлка.txt", []byte("tree"))
	if got := mustRead(t, fs, "/ёЛКА.TXT"); string(got) != "tree" {
		t.Errorf("case-insensitive lookup: %q", got)
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	fs = mustOpen(t, m, int64(len(m.Data)))
	if l := fs.Label(); l != "API" {
		t.Errorf("label %q", l)
	}
	if r, err := fs.Check(false); err != nil || !r.Clean() {
		t.Errorf("Check: %v\n%s", err, r)
	}
}

// TestTimestamps checks the 10 ms increments and the UTC offset field:
// a time written in one zone reads back as the same instant in any other.
func TestTimestamps(t *testing.T) {
	m := newMemDev(t, 8<<20)
	mustFormat(t, m, 8<<20, FormatOptions{})
	india := time.FixedZone("IST", 5*3600+1800)
	stamp := time.Date(2023, 7, 8, 9, 10, 11, 370_000_000, india)
	fs, err := OpenWithOptions(m, 8<<20, Options{Location: india, Now: func() time.Time { return stamp }})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, fs, "/t", []byte("x"))
	later := time.Date(2030, 1, 2, 3, 4, 5, 990_000_000, time.UTC)
	if err := fs.Chtimes("/t", later, later); err != nil {
		t.Fatal(err)
	}
	fs.Close()
	fs2, err := OpenWithOptions(m, 8<<20, Options{Location: time.FixedZone("X", -7*3600)})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := fs2.Stat("/t")
	if err != nil {
		t.Fatal(err)
	}
	if !fi.CreateTime().Equal(stamp) {
		t.Errorf("create time %v, want %v", fi.CreateTime(), stamp)
	}
	if !fi.ModTime().Equal(later) {
		t.Errorf("mod time %v, want %v", fi.ModTime(), later)
	}
	if _, off := fi.ModTime().Zone(); off != 5*3600+1800 {
		t.Errorf("mod time offset %d, want IST's", off)
	}
	if want := later.Truncate(2 * time.Second); !fi.AccessTime().Equal(want) {
		t.Errorf("access time %v, want %v", fi.AccessTime(), want)
	}
}

// TestLargeDirectory puts thousands of entries in one directory (which
// grows over many clusters), then checks lookups, listing and removal.
func TestLargeDirectory(t *testing.T) {
	const size = 64 << 20
	fs, m := newTestFS(t, size)
	fs.Mkdir("/many")
	const n = 3000
	for i := 0; i < n; i++ {
		mustWrite(t, fs, fmt.Sprintf("/many/file number %05d with a longer name.txt", i), pattern(i, i%50))
	}
	fs.Close()
	fs = mustOpen(t, m, size)
	ents, err := fs.ReadDir("/many")
	if err != nil || len(ents) != n {
		t.Fatalf("%d entries, %v", len(ents), err)
	}
	for i := 0; i < n; i += 7 {
		p := fmt.Sprintf("/MANY/FILE NUMBER %05d WITH A LONGER NAME.TXT", i)
		if got := mustRead(t, fs, p); !bytes.Equal(got, pattern(i, i%50)) {
			t.Fatalf("%s: content", p)
		}
	}
	for i := 0; i < n; i += 2 {
		if err := fs.Remove(fmt.Sprintf("/many/file number %05d with a longer name.txt", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 500; i++ {
		mustWrite(t, fs, fmt.Sprintf("/many/again %d", i), pattern(i, 10))
	}
	if r, err := fs.Check(false); err != nil || !r.Clean() {
		t.Fatalf("Check: %v\n%s", err, r)
	}
	fs.Close()
	needTools(t, "fsck.exfat")
	fsckClean(t, saveImage(t, m))
}

func TestNoFatChainAndFragmentation(t *testing.T) {
	fs, m := newTestFS(t, 8<<20)
	cs := fs.ClusterSize()
	// Two files written in turns fragment each other.
	a, _ := fs.Create("/a")
	b, _ := fs.Create("/b")
	var wa, wb []byte
	for i := 0; i < 20; i++ {
		pa, pb := pattern(i, cs+100), pattern(100+i, cs/2)
		a.Write(pa)
		b.Write(pb)
		wa, wb = append(wa, pa...), append(wb, pb...)
	}
	a.Close()
	b.Close()
	mustWrite(t, fs, "/contiguous", pattern(7, 10*cs))
	fs.Close()
	fs = mustOpen(t, m, int64(len(m.Data)))
	for name, want := range map[string][]byte{"/a": wa, "/b": wb, "/contiguous": pattern(7, 10*cs)} {
		if got := mustRead(t, fs, name); !bytes.Equal(got, want) {
			t.Errorf("%s differs", name)
		}
	}
	fi, _ := fs.Stat("/a")
	fc, _ := fs.Stat("/contiguous")
	if fi.Contiguous() || !fc.Contiguous() {
		t.Errorf("NoFatChain: /a %v (want false), /contiguous %v (want true)", fi.Contiguous(), fc.Contiguous())
	}
	if r, err := fs.Check(false); err != nil || !r.Clean() {
		t.Fatalf("Check: %v\n%s", err, r)
	}
	// Shrink a fragmented file and a contiguous one.
	for _, p := range []string{"/a", "/contiguous"} {
		f, _ := fs.OpenFile(p, os.O_RDWR, 0)
		if err := f.Truncate(int64(3*cs + 1)); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if r, err := fs.Check(false); err != nil || !r.Clean() {
		t.Fatalf("Check after shrinking: %v\n%s", err, r)
	}
	if got := mustRead(t, fs, "/a"); !bytes.Equal(got, wa[:3*cs+1]) {
		t.Error("/a after shrink")
	}
	fs.Close()
	needTools(t, "fsck.exfat")
	fsckClean(t, saveImage(t, m))
}

// TestVolumeDirtyFlag checks that VolumeDirty is set on disk from the
// first change until Sync, that PercentInUse is brought up to date, that
// the boot checksum (which leaves both out) still holds, and that a
// volume found dirty stays dirty until Check(true).
func TestVolumeDirtyFlag(t *testing.T) {
	const size = 8 << 20
	m := newMemDev(t, size)
	mustFormat(t, m, size, FormatOptions{})
	flags := func() uint16 { return uint16(m.Data[offVolumeFlags]) | uint16(m.Data[offVolumeFlags+1])<<8 }
	fs := mustOpen(t, m, size)
	if fs.Dirty() || flags()&flagVolumeDirty != 0 {
		t.Fatal("a fresh volume is dirty")
	}
	f, _ := fs.Create("/f")
	f.Write(pattern(1, 3<<20))
	if flags()&flagVolumeDirty == 0 {
		t.Error("not marked dirty while a file is being written")
	}
	f.Close()
	if err := fs.Sync(); err != nil {
		t.Fatal(err)
	}
	if flags()&flagVolumeDirty != 0 {
		t.Error("still dirty after Sync")
	}
	if p := m.Data[offPercentInUse]; p < 40 || p > 60 {
		t.Errorf("PercentInUse %d after filling half the volume", p)
	}
	fs.Close()
	if _, err := parseBootRegion(m.Data[:24*512], size); err != nil {
		t.Fatalf("boot region after use: %v", err)
	}
	// A volume found dirty and opened as it is (NoRecovery) stays so
	// until Check(true).
	m.Data[offVolumeFlags] |= flagVolumeDirty
	fs, err := OpenWithOptions(m, size, Options{NoRecovery: true})
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, fs, "/g", []byte("g"))
	fs.Sync()
	if !fs.Dirty() || flags()&flagVolumeDirty == 0 {
		t.Error("a volume opened dirty was marked clean by Sync")
	}
	r, err := fs.Check(true)
	if err != nil || !r.Dirty || r.ExitCode() != 1 || flags()&flagVolumeDirty != 0 {
		t.Errorf("Check(true) of a dirty volume: %v, exit code %d, flags %#x\n%s", err, r.ExitCode(), flags(), r)
	}
	fs.Close()
	// Opened writable the usual way, a dirty volume with nothing left
	// half-way is recovered: marked clean at once.
	m.Data[offVolumeFlags] |= flagVolumeDirty
	fs = mustOpen(t, m, size)
	if fs.Dirty() || flags()&flagVolumeDirty != 0 || fs.Recovery() == nil {
		t.Errorf("a dirty volume was not recovered at a writable open: Dirty %v, flags %#x, recovery %v", fs.Dirty(), flags(), fs.Recovery())
	}
	fs.Close()
	needTools(t, "fsck.exfat", "exfatlabel")
	fsckClean(t, saveImage(t, m))
}

// TestLabelReadByExfatprogs checks a Unicode label with exfatlabel.
func TestLabelReadByExfatprogs(t *testing.T) {
	needTools(t, "exfatlabel")
	const size = 8 << 20
	m := newMemDev(t, size)
	mustFormat(t, m, size, FormatOptions{Label: "Ключ ✓ 2024"})
	if l := mustOpen(t, m, size).Label(); l != "Ключ ✓ 2024" {
		t.Errorf("Label() = %q", l)
	}
	out, err := runTool(t, nil, "exfatlabel", saveImage(t, m))
	if err != nil || !strings.Contains(out, "label: Ключ ✓ 2024") {
		t.Errorf("exfatlabel: %v\n%s", err, out)
	}
}
