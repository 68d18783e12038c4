package exfat

import (
	"bytes"
	"fmt"
	"github.com/cryptvol/cryptvol/internal/fattest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The crash tests replay an operation once per write it makes, each time
// stopping the device after k writes (every later write fails and is
// dropped, as if the machine died), then reopen what is on the "disk" and
// check that every file that existed before is intact, that the file the
// operation was about is in its old or its new state and nothing between,
// that Check finds nothing worse than lost clusters (or what the operation
// is documented to leave for a moment), and that after Check(true)
// fsck.exfat -n finds the volume clean.

type crashOp = fattest.CrashOp[*FS]

const longName = "/dir/" + "a name of more than two hundred and ten characters needs two sectors of entries " +
	"when sixteen entries fit in a sector, so its set spans them; this file only stands by while the others change" +
	" around it.txt"

func preexisting(t *testing.T, size int64, cluster int) (*memDev, map[string][]byte) {
	dev := newMemDev(t, size)
	mustFormat(t, dev, size, FormatOptions{ClusterSize: cluster, Align: 4096})
	fs := mustOpen(t, dev, size)
	files := map[string][]byte{
		"/keep.txt":                 pattern(1, 3000),
		"/Long name kept.bin":       pattern(2, 9000),
		"/victim.txt":               pattern(3, 5000),
		"/fragmented.bin":           pattern(10, 3*cluster+5),
		"/dir/inner.txt":            pattern(4, 700),
		"/dir/Привет мир.txt":       pattern(5, 12000),
		longName:                    pattern(11, 2000),
		"/full/seed.txt":            pattern(6, 10),
		"/tree/a/b.txt":             pattern(7, 4000),
		"/tree/c.txt":               pattern(8, 1),
		"/other/to be replaced.txt": pattern(9, 6000),
	}
	for _, d := range []string{"/dir", "/tree/a", "/other", "/full"} {
		if err := fs.MkdirAll(d); err != nil {
			t.Fatal(err)
		}
	}
	for p, b := range files {
		mustWrite(t, fs, p, b)
	}
	// /fragmented.bin is followed by another file, so appending to it
	// cannot stay contiguous; and it is made fragmented already.
	f, _ := fs.OpenFile("/fragmented.bin", os.O_WRONLY|os.O_APPEND, 0)
	mustWrite(t, fs, "/after fragmented", pattern(12, 100))
	files["/after fragmented"] = pattern(12, 100)
	f.Write(pattern(13, cluster))
	f.Close()
	files["/fragmented.bin"] = append(files["/fragmented.bin"], pattern(13, cluster)...)
	if fi, _ := fs.Stat("/fragmented.bin"); fi.Contiguous() {
		t.Fatal("/fragmented.bin is contiguous")
	}
	// Fill /full's cluster to its last slot, so one more entry grows it.
	fattest.FillDir(t, fs, "/full", files, func() bool {
		d, _ := fs.dirTree().Dir([]string{"full"})
		return d.end+3 > d.slots()
	})
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	return dev, files
}

func appendOp(name, p string, data []byte, long bool) crashOp {
	return crashOp{Name: name, LongChains: long, Touches: []string{p}, Run: func(fs *FS) error {
		return fattest.AppendFile(fs.OpenFile, p, data)
	}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
		fattest.OneOf(t, fs, p, pre[p], append(append([]byte{}, pre[p]...), data...))
	}}
}

func crashOps() []crashOp {
	newData := pattern(50, 20000)
	return append(fattest.CommonCrashOps[*FS](newData), []crashOp{
		{Name: "put with a name of 17 entries", LongChains: true, Run: func(fs *FS) error {
			return fs.WriteFile("/dir/"+strings.Repeat("n", 240), newData[:5000], 0o644)
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			fattest.OneOf(t, fs, "/dir/"+strings.Repeat("n", 240), nil, newData[:5000])
		}},
		{Name: "put while another new file is open", Run: func(fs *FS) error {
			f, err := fs.Create("/dir/open.bin")
			if err != nil {
				return err
			}
			if _, err := f.Write(newData); err != nil {
				return err
			}
			if err := fs.WriteFile("/dir/other.bin", newData[:7000], 0o644); err != nil {
				return err
			}
			return f.Close()
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			// The open file's set went to disk with its neighbour's, as an
			// empty file (doc.go says so).
			fattest.OneOf(t, fs, "/dir/open.bin", nil, []byte{}, newData)
			fattest.OneOf(t, fs, "/dir/other.bin", nil, newData[:7000])
		}},
		{Name: "put into a full directory", LongChains: true, Run: func(fs *FS) error {
			return fs.WriteFile("/full/one more with a long name.txt", newData[:3000], 0o644)
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			fattest.OneOf(t, fs, "/full/one more with a long name.txt", nil, newData[:3000])
		}},
		appendOp("append contiguous", "/victim.txt", newData, false),
		appendOp("append fragmented", "/fragmented.bin", newData, true),
		appendOp("append turning contiguous into fragmented", "/keep.txt", newData, false),
		{Name: "truncate", LongChains: true, Touches: []string{"/fragmented.bin"}, Run: func(fs *FS) error {
			f, err := fs.OpenFile("/fragmented.bin", os.O_RDWR, 0)
			if err != nil {
				return err
			}
			if err := f.Truncate(100); err != nil {
				return err
			}
			return f.Close()
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			fattest.OneOf(t, fs, "/fragmented.bin", pre["/fragmented.bin"], pre["/fragmented.bin"][:100])
		}},
		{Name: "rename in place", Touches: []string{"/victim.txt"}, Run: func(fs *FS) error {
			return fs.Rename("/victim.txt", "/Victim2.TXT")
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			a, errA := fs.ReadFile("/victim.txt")
			b, errB := fs.ReadFile("/Victim2.TXT")
			ents, _ := fs.ReadDir("/")
			n := 0
			for _, e := range ents {
				if strings.EqualFold(e.Name(), "victim.txt") || e.Name() == "Victim2.TXT" {
					n++
				}
			}
			if !(errA == nil && bytes.Equal(a, pre["/victim.txt"])) && !(errB == nil && bytes.Equal(b, pre["/victim.txt"])) || n != 1 {
				t.Errorf("renamed file lost or doubled (%d names): %v %v", n, errA, errB)
			}
		}},
		{Name: "rename across directories", Rename: true, Touches: []string{"/victim.txt"}, Run: func(fs *FS) error {
			return fs.Rename("/victim.txt", "/dir/moved victim.txt")
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			a, errA := fs.ReadFile("/victim.txt")
			b, errB := fs.ReadFile("/dir/moved victim.txt")
			if !(errA == nil && bytes.Equal(a, pre["/victim.txt"])) && !(errB == nil && bytes.Equal(b, pre["/victim.txt"])) {
				t.Errorf("renamed file lost: %v %v", errA, errB)
			}
		}},
		{Name: "rename over an existing file", Rename: true, Touches: []string{"/victim.txt", "/other/to be replaced.txt"}, Run: func(fs *FS) error {
			return fs.Rename("/victim.txt", "/other/to be replaced.txt")
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			fattest.OneOf(t, fs, "/other/to be replaced.txt", pre["/other/to be replaced.txt"], pre["/victim.txt"])
			if b, _ := fs.ReadFile("/other/to be replaced.txt"); !bytes.Equal(b, pre["/victim.txt"]) {
				fattest.OneOf(t, fs, "/victim.txt", pre["/victim.txt"])
			}
		}},
		{Name: "rename a directory", Rename: true, Touches: []string{"/tree/a/b.txt", "/tree/c.txt"}, Run: func(fs *FS) error {
			return fs.Rename("/tree", "/dir/tree moved")
		}, Check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			fattest.Kept(t, fs, "/tree/c.txt", "/dir/tree moved/c.txt")
		}},
	}...)
}

func TestCrashSafety(t *testing.T) {
	haveFsck := true
	if _, err := exec.LookPath("fsck.exfat"); err != nil {
		haveFsck = false
		t.Log("fsck.exfat is not installed: checking with Check only")
	}
	for _, c := range []struct {
		size    int64
		cluster int
	}{{4 << 20, 512}, {16 << 20, 4096}} {
		base, pre := preexisting(t, c.size, c.cluster)
		for _, op := range crashOps() {
			t.Run(fmt.Sprintf("%d/%s", c.cluster, op.Name), func(t *testing.T) {
				states := map[string]int{}
				fsckStates := map[string]int{}
				open := func(dev *fattest.CrashDev) *FS { return mustOpen(t, dev, c.size) }
				total := fattest.CrashRuns(t, base.Data, 1, open, op.Run, func(k, total int, data []byte) {
					crashed := bytes.Clone(data)
					after := &memDev{T: t, Data: data}
					// As found: what the crash left, for Check to report.
					fs2, err := OpenWithOptions(after, c.size, Options{NoRecovery: true})
					if err != nil {
						t.Fatalf("k=%d of %d: cannot open after crash: %v", k, total, err)
					}
					// A plain writable open recovers it: nothing that was
					// there before is lost, and nothing is left to mend.
					rec := &memDev{T: t, Data: bytes.Clone(crashed)}
					if fs3, err := Open(rec, c.size); err != nil {
						t.Errorf("k=%d of %d: the recovering open failed: %v", k, total, err)
					} else {
						fattest.Intact(t, fmt.Sprintf("k=%d, after the recovery", k), fs3, op.Touches, pre)
						if rep, err := fs3.Check(false); err != nil || !rep.Clean() {
							t.Errorf("k=%d of %d: not clean after the recovery: %v\n%s", k, total, err, rep)
						}
						fs3.Close()
					}
					fattest.Intact(t, fmt.Sprintf("k=%d", k), fs2, op.Touches, pre)
					op.Check(t, fs2, pre)
					rep, err := fs2.Check(false)
					if err != nil {
						t.Fatalf("k=%d: Check: %v", k, err)
					}
					bad := len(rep.BadEntries) > 0 || len(rep.Unmarked) > 0 || len(rep.BadChecksums) > 0 || rep.OrphanEntries > 0 ||
						len(rep.BootProblems) > 0 || len(rep.CrossLinks) > 0 || len(rep.Duplicates) > 0 && !op.Rename || len(rep.LongChains) > 0 && !op.LongChains
					if bad {
						t.Errorf("k=%d of %d: Check found more than lost clusters:\n%s", k, total, rep)
					}
					if k > 0 && k < total && !rep.Dirty {
						t.Errorf("k=%d of %d: the volume is not marked dirty after a crash in the middle", k, total)
					}
					state := "clean"
					if !rep.Clean() {
						state = strings.ReplaceAll(strings.TrimSpace(strings.SplitN(rep.String(), "\n", 2)[1]), "\n", "; ")
					}
					states[state]++
					if haveFsck {
						img := filepath.Join(t.TempDir(), "crash.img")
						os.WriteFile(img, crashed, 0o644)
						out, err := runTool(t, nil, "fsck.exfat", "-n", img)
						fsckStates[fsckSummary(out, err)]++
					}
					if _, err := fs2.Check(true); err != nil {
						t.Fatalf("k=%d: repair: %v", k, err)
					}
					if rep, err := fs2.Check(false); err != nil || (!rep.Clean() && !rep.Errors()) {
						t.Errorf("k=%d: after repair: %v\n%s", k, err, rep)
					}
					if haveFsck {
						fsckClean(t, saveImage(t, after))
					}
				})
				t.Logf("%d writes; Check after a crash: %v", total, states)
				if haveFsck {
					t.Logf("fsck.exfat -n after a crash, before repair: %v", fsckStates)
				}
			})
		}
	}
}

// fsckSummary reduces fsck.exfat output to its findings (paths and
// numbers dropped) for the log.
func fsckSummary(out string, err error) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "exfatprogs version") || strings.Contains(l, "directories") {
			continue
		}
		lines = append(lines, l)
	}
	s := "exit 0"
	if err != nil {
		s = err.Error()
	}
	if len(lines) > 0 {
		s += ": " + strings.Join(lines, " / ")
	}
	return s
}
