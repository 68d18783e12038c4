package fat

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"github.com/cryptvol/cryptvol/internal/fattest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The crash tests replay an operation once per write it makes, each time
// stopping the device after k writes (every later write fails and is
// dropped, as if the machine died). Then:
//
//  1. what is on the "disk" is checked as it is: every file that existed
//     before and that the operation does not touch is intact, Check finds
//     nothing worse than what an interrupted operation is allowed to leave
//     (lost clusters; a marked rename; a chain longer than its file after
//     an append; a moved directory's old ".."; orphaned long-name slots),
//     in particular never a cross-link, and fsck.fat -n agrees;
//  2. the next ordinary command runs: a writable Open (which recovers the
//     volume) and a new file that fills all the free space (on FAT32,
//     and with -short on FAT16, 64 KiB, unless -fat.crashlong: there Check
//     alone stands guard, as a live file's cluster wrongly freed is a
//     chain running into a free cluster), so that any cluster wrongly
//     freed would be overwritten;
//  3. afterwards the volume is clean for Check and for fsck.fat -n (exit
//     0), no file that existed before is lost or changed, the file the
//     operation was about is in its old or its new state and nothing
//     between, and the file the next command wrote reads back.
//
// With -fat.crashlong the next command is also crashed after each of its
// writes (a crash during recovery), on every FAT type; by default that is
// done on FAT12 only, and with -short (as under qemu) not at all. With
// -short, FAT16 and FAT32 crash after every fourth write only (and after
// the last): the full run is the native one.

var crashLong = flag.Bool("fat.crashlong", false, "crash tests: crash the recovery too, after each of its writes, on every FAT type (slow)")

type crashOp = fattest.CrashOp[*FS]

// preexisting builds the image every crash run starts from.
func preexisting(t *testing.T, size int64, typ Type, cluster int) (*memDev, map[string][]byte) {
	dev := newMemDev(t, size)
	mustFormat(t, dev, size, FormatOptions{Type: typ, ClusterSize: cluster})
	fs := mustOpen(t, dev, size)
	files := map[string][]byte{
		"/keep.txt":                 pattern(1, 3000),
		"/Long name kept.bin":       pattern(2, 9000),
		"/victim.txt":               pattern(3, 5000),
		"/dir/inner.txt":            pattern(4, 700),
		"/dir/Привет мир.txt":       pattern(5, 12000),
		"/full/seed.txt":            pattern(6, 10),
		"/tree/a/b.txt":             pattern(7, 4000),
		"/tree/c.txt":               pattern(8, 1),
		"/other/to be replaced.txt": pattern(9, 6000),
		"/empty.txt":                {},
	}
	for _, d := range []string{"/dir", "/tree/a", "/other/empty dir"} {
		if err := fs.MkdirAll(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := fs.Mkdir("/full"); err != nil {
		t.Fatal(err)
	}
	// Fill /full's clusters up to the last slot, so one more entry makes it
	// grow.
	fattest.FillDir(t, fs, "/full", files, func() bool {
		d, _ := fs.dirTree().Dir([]string{"full"})
		return d.end+2 > d.slots()
	})
	for p, b := range files {
		mustWrite(t, fs, p, b)
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	return dev, files
}

// movedOnce asserts that exactly one of from and to holds data.
func movedOnce(t *testing.T, fs *FS, from, to string, data []byte) {
	t.Helper()
	a, errA := fs.ReadFile(from)
	b, errB := fs.ReadFile(to)
	switch {
	case errA == nil && errB == nil:
		t.Errorf("both %s and %s exist after recovery", from, to)
	case errA == nil && !bytes.Equal(a, data), errB == nil && !bytes.Equal(b, data):
		t.Errorf("moved file damaged")
	case errA != nil && errB != nil:
		t.Errorf("moved file lost: %v / %v", errA, errB)
	}
}

// replaced asserts the states a rename of from over to may leave: to
// still old and from still there, or to holding from's data and from gone.
func replaced(t *testing.T, fs *FS, from, to string, pre map[string][]byte) {
	t.Helper()
	b, _ := fs.ReadFile(to)
	if bytes.Equal(b, pre[from]) {
		fattest.OneOf(t, fs, from, nil)
		return
	}
	fattest.OneOf(t, fs, to, pre[to])
	fattest.OneOf(t, fs, from, pre[from])
}

// dirMovedOnce asserts that a directory is under exactly one of two names.
func dirMovedOnce(t *testing.T, fs *FS, from, to string, pre map[string][]byte) {
	t.Helper()
	_, e1 := fs.Stat(from)
	_, e2 := fs.Stat(to)
	if (e1 == nil) == (e2 == nil) {
		t.Errorf("directory under both or neither name: %v / %v", e1, e2)
		return
	}
	at := from
	if e1 != nil {
		at = to
	}
	for p, b := range pre {
		if strings.HasPrefix(p, from+"/") {
			fattest.OneOf(t, fs, at+strings.TrimPrefix(p, from), b)
		}
	}
}

func crashOps() []crashOp {
	newData := pattern(50, 20000)
	return append(fattest.CommonCrashOps[*FS](newData), []crashOp{
		{Name: "put into a full directory", Run: func(fs *FS) error {
			return fs.WriteFile("/full/one more with a long name.txt", newData[:3000], 0o644)
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			fattest.OneOf(t, fs, "/full/one more with a long name.txt", nil, newData[:3000])
		}},
		{Name: "append", LongChains: true, Touches: []string{"/victim.txt"}, Run: func(fs *FS) error {
			return fattest.AppendFile(fs.OpenFile, "/victim.txt", newData)
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			fattest.OneOf(t, fs, "/victim.txt", pre["/victim.txt"], append(append([]byte{}, pre["/victim.txt"]...), newData...))
		}},
		{Name: "mv across directories", Rename: true, Touches: []string{"/victim.txt"}, Run: func(fs *FS) error {
			return fs.Rename("/victim.txt", "/dir/moved victim.txt")
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			movedOnce(t, fs, "/victim.txt", "/dir/moved victim.txt", pre["/victim.txt"])
		}},
		{Name: "mv to a longer name in the same directory", Rename: true, Touches: []string{"/Long name kept.bin"}, Run: func(fs *FS) error {
			return fs.Rename("/Long name kept.bin", "/a much longer name that needs two more slots.bin")
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			movedOnce(t, fs, "/Long name kept.bin", "/a much longer name that needs two more slots.bin", pre["/Long name kept.bin"])
		}},
		{Name: "mv changing case", Rename: true, Touches: []string{"/keep.txt"}, Run: func(fs *FS) error {
			return fs.Rename("/keep.txt", "/KEEP.txt")
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			fattest.OneOf(t, fs, "/keep.txt", pre["/keep.txt"])
		}},
		{Name: "mv --force across directories", Rename: true, Touches: []string{"/victim.txt", "/other/to be replaced.txt"}, Run: func(fs *FS) error {
			return fs.Rename("/victim.txt", "/other/to be replaced.txt")
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			replaced(t, fs, "/victim.txt", "/other/to be replaced.txt", pre)
		}},
		{Name: "mv --force in one directory", Rename: true, Touches: []string{"/dir/inner.txt", "/dir/Привет мир.txt"}, Run: func(fs *FS) error {
			return fs.Rename("/dir/inner.txt", "/dir/Привет мир.txt")
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			replaced(t, fs, "/dir/inner.txt", "/dir/Привет мир.txt", pre)
		}},
		{Name: "mv an empty file", Rename: true, Touches: []string{"/empty.txt"}, Run: func(fs *FS) error {
			return fs.Rename("/empty.txt", "/dir/empty moved.txt")
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			// An empty file's new entry cannot be told from another empty
			// file, so recovery may keep both names; never neither.
			fattest.Kept(t, fs, "/empty.txt", "/dir/empty moved.txt")
		}},
		{Name: "mv a directory", Rename: true, DirMove: true, Touches: []string{"/tree/"}, Run: func(fs *FS) error {
			return fs.Rename("/tree", "/dir/tree moved")
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			dirMovedOnce(t, fs, "/tree", "/dir/tree moved", pre)
		}},
		{Name: "mv a directory over an empty one", Rename: true, DirMove: true, Touches: []string{"/tree/", "/other/empty dir/"}, Run: func(fs *FS) error {
			return fs.Rename("/tree", "/other/empty dir")
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			if _, err := fs.Stat("/tree"); err == nil {
				if ents, err := fs.ReadDir("/other/empty dir"); err != nil || len(ents) != 0 {
					t.Errorf("/tree is still there but the directory it replaces is not empty: %v %v", ents, err)
				}
				return
			}
			fattest.OneOf(t, fs, "/other/empty dir/c.txt", pre["/tree/c.txt"])
			fattest.OneOf(t, fs, "/other/empty dir/a/b.txt", pre["/tree/a/b.txt"])
		}},
	}...)
}

// fsckAllowed matches the fsck.fat -n output lines that report nothing
// worse than lost clusters, unequal FAT copies or the dirty flag;
// fsckLongChain those of a chain longer than its file; fsckRename those
// of a rename caught between its writes (two names sharing clusters, a
// moved directory's old "..", long-name slots left by an erased entry).
var (
	fsckAllowed   = regexp.MustCompile(`^(Reclaimed \d+ unused clusters? \(\d+ bytes\)\.|Free cluster summary .*|FATs differ but appear to be intact\.|Using first FAT\.|Dirty bit is set\. Fs was not properly unmounted and some data may be corrupt\.|Automatically removing dirty bit\.|Leaving filesystem unchanged\.|.*: \d+ files, \d+/\d+ clusters|fsck\.fat .*|)$`)
	fsckLongChain = regexp.MustCompile(`^(/\S.*|File size is \d+ bytes, cluster chain length is > \d+ bytes\.|Truncating file to \d+ bytes\.)$`)
	fsckRename    = regexp.MustCompile(`^(/\S.*|.* and|share clusters\.|Truncating second to 0 bytes\.|File size is \d+ bytes, cluster chain length is 0 bytes\.|Truncating file to 0 bytes\.|Invalid '\.\.' entry in the second slot\. Fixing\.|Start \(\d+\) does not point to \.\. \(\d+\)|Orphaned long file name part ".*"|  Auto-deleting\.|Deleted .*)$`)
)

func TestCrashSafety(t *testing.T) {
	haveFsck := true
	if _, err := runTool(t, nil, "fsck.fat", "--help"); err != nil && !strings.Contains(err.Error(), "exit status") {
		haveFsck = false
	}
	for _, c := range []struct {
		size    int64
		typ     Type
		cluster int
	}{{1 << 20, FAT12, 512}, {12 << 20, FAT16, 2048}, {40 << 20, FAT32, 512}} {
		base, pre := preexisting(t, c.size, c.typ, c.cluster)
		nested := *crashLong || c.typ == FAT12 && !testing.Short()
		for _, op := range crashOps() {
			t.Run(c.typ.String()+"/"+op.Name, func(t *testing.T) {
				states := map[string]int{}
				recoveries := 0
				step := 1
				if testing.Short() && !*crashLong && c.typ != FAT12 {
					step = 4
				}
				open := func(dev *fattest.CrashDev) *FS { return mustOpen(t, dev, c.size) }
				total := fattest.CrashRuns(t, base.Data, step, open, op.Run, func(k, total int, crashed []byte) {
					states[crashedState(t, k, total, op, crashed, c.size, pre, haveFsck)]++

					// The next ordinary command, and the state it leaves.
					after := bytes.Clone(crashed)
					fillAll := *crashLong || c.typ == FAT12 || c.typ == FAT16 && !testing.Short()
					fill := nextCommand(t, &memDev{T: t, Data: after}, c.size, fattest.NoCrash, fillAll)
					checkRecovered(t, fmt.Sprintf("k=%d", k), op, after, c.size, pre, fill, haveFsck)
					if !nested || t.Failed() {
						return
					}
					// A crash during that command (its recovery included),
					// then the command once more.
					probe := fattest.NewCrashDev(t, bytes.Clone(crashed), fattest.NoCrash)
					nextCommand(t, probe, c.size, fattest.NoCrash, fillAll)
					for j := 0; j < probe.Writes; j++ {
						twice := bytes.Clone(crashed)
						nextCommand(t, fattest.NewCrashDev(t, twice, j), c.size, j, fillAll)
						fill := nextCommand(t, &memDev{T: t, Data: twice}, c.size, fattest.NoCrash, fillAll)
						// (fsck.fat here only with -fat.crashlong: Check stands guard.)
						checkRecovered(t, fmt.Sprintf("k=%d, recovery crashed at j=%d", k, j), op, twice, c.size, pre, fill, haveFsck && *crashLong)
						recoveries++
					}
				})
				t.Logf("%d writes; states after a crash: %v; %d crashed recoveries", total, states, recoveries)
			})
		}
	}
}

// crashedState checks the image right after the crash, opened read-only
// (a writable Open would recover it), and names what Check found.
func crashedState(t *testing.T, k, total int, op crashOp, img []byte, size int64, pre map[string][]byte, haveFsck bool) string {
	t.Helper()
	fs, err := OpenWithOptions(&memDev{T: t, Data: img}, size, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("k=%d of %d: cannot open after crash: %v", k, total, err)
	}
	fattest.Intact(t, fmt.Sprintf("k=%d, before recovery", k), fs, op.Touches, pre)
	rep, err := fs.Check(false)
	if err != nil {
		t.Fatalf("k=%d: Check: %v", k, err)
	}
	badOK := func(s string) bool { return op.DirMove && strings.Contains(s, `".." points to cluster`) }
	for _, s := range rep.BadEntries {
		if !badOK(s) {
			t.Errorf("k=%d of %d: bad entry after a crash: %s", k, total, s)
		}
	}
	if len(rep.CrossLinks) > 0 || rep.FreeCountWrong || rep.StrayDots > 0 || rep.MarkedDamaged ||
		len(rep.LongChains) > 0 && !op.LongChains || len(rep.Interrupted) > 0 && !op.Rename {
		t.Errorf("k=%d of %d: Check found more than an interrupted %s may leave:\n%s", k, total, op.Name, rep)
	}
	state := "clean"
	if !rep.Clean() {
		state = strings.TrimSpace(strings.SplitN(rep.String(), "\n", 2)[1])
	}
	if haveFsck {
		out := fsckN(t, img)
		for _, l := range strings.Split(out, "\n") {
			l = strings.TrimSpace(l)
			if !fsckAllowed.MatchString(l) && !(op.LongChains && fsckLongChain.MatchString(l)) && !(op.Rename && fsckRename.MatchString(l)) {
				t.Errorf("k=%d: fsck.fat -n reports more than an interrupted %s may leave: %q\n%s", k, op.Name, l, out)
				break
			}
		}
	}
	return state
}

// nextCommand opens the volume for writing (which recovers it) and writes
// a file filling all the free space, crashing after limit writes. It
// returns the file's content (nil after a crash).
func nextCommand(t *testing.T, dev interface {
	ReadAt([]byte, int64) (int, error)
	WriteAt([]byte, int64) (int, error)
}, size int64, limit int, fillAll bool) []byte {
	t.Helper()
	fs, err := Open(dev, size)
	if err != nil {
		if limit < fattest.NoCrash && errors.Is(err, fattest.ErrCrashed) {
			return nil
		}
		t.Fatalf("next command: Open: %v", err)
	}
	st := fs.Statfs()
	n := int(st.FreeBytes) - st.ClusterSize
	if !fillAll {
		n = min(n, 64<<10)
	}
	if len(fillPattern) < n {
		fillPattern = pattern(77, max(n, 40<<20))
	}
	fill := fillPattern[:n]
	err = fs.WriteFile("/next command.bin", fill, 0o644)
	if cerr := fs.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if limit < fattest.NoCrash && errors.Is(err, fattest.ErrCrashed) {
			return nil
		}
		t.Fatalf("next command: %v", err)
	}
	return fill
}

// fillPattern holds the next command's data (pattern's prefix property:
// pattern(s, n) is the start of pattern(s, m) for m > n).
var fillPattern []byte

// checkRecovered checks the volume after the next command.
func checkRecovered(t *testing.T, what string, op crashOp, img []byte, size int64, pre map[string][]byte, fill []byte, haveFsck bool) {
	t.Helper()
	fs, err := OpenWithOptions(&memDev{T: t, Data: img}, size, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("%s: cannot open after the next command: %v", what, err)
	}
	fattest.Intact(t, what+", after the next command", fs, op.Touches, pre)
	op.Check(t, fs, pre)
	if got, err := fs.ReadFile("/next command.bin"); err != nil || !bytes.Equal(got, fill) {
		t.Errorf("%s: the next command's file is damaged: %v", what, err)
	}
	rep, err := fs.Check(false)
	if err != nil || !rep.Clean() {
		t.Errorf("%s: not clean after the next command: %v\n%s", what, err, rep)
	}
	if haveFsck {
		p := writeSparse(t, img)
		if out, err := runTool(t, nil, "fsck.fat", "-n", p); err != nil {
			t.Errorf("%s: fsck.fat -n after the next command: %v\n%s", what, err, out)
		}
	}
}

// fsckN runs fsck.fat -n on an image held in memory.
func fsckN(t *testing.T, img []byte) string {
	t.Helper()
	out, _ := runTool(t, nil, "fsck.fat", "-n", writeSparse(t, img))
	return out
}

// writeSparse saves an image to a temporary file, skipping the 4 KiB
// blocks that are all zeros (most of them).
func writeSparse(t *testing.T, img []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fat.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(int64(len(img))); err != nil {
		t.Fatal(err)
	}
	var zero [4096]byte
	for off := 0; off < len(img); off += len(zero) {
		b := img[off:min(off+len(zero), len(img))]
		if bytes.Equal(b, zero[:len(b)]) {
			continue
		}
		if _, err := f.WriteAt(b, int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	return p
}
