package fat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The crash tests replay an operation once per write it makes, each time
// stopping the device after k writes (every later write fails and is
// dropped, as if the machine died), then reopen what is on the "disk" and
// check that every file that existed before is intact, that the file the
// operation was about is in its old or its new state and nothing between,
// and that Check and fsck.fat -n find nothing worse than lost clusters
// (or, for an append, a chain longer than the file; for a rename, the two
// names sharing clusters for the moment between its two writes).

var errCrashed = errors.New("simulated crash")

// crashDev drops every write after the first limit ones.
type crashDev struct {
	*memDev
	writes, limit int
}

func (c *crashDev) WriteAt(p []byte, off int64) (int, error) {
	if c.writes >= c.limit {
		return 0, errCrashed
	}
	c.writes++
	return c.memDev.WriteAt(p, off)
}

type crashOp struct {
	name string
	run  func(fs *FS) error
	// target is the path the operation changes (empty if it only adds);
	// oldOK/newOK say which states of it are acceptable afterwards.
	check func(t *testing.T, fs *FS, pre map[string][]byte)
	// allowed names the Check findings this operation may leave.
	longChains, crossLinks bool
}

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
	}
	for _, d := range []string{"/dir", "/tree/a", "/other"} {
		if err := fs.MkdirAll(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := fs.Mkdir("/full"); err != nil {
		t.Fatal(err)
	}
	// Fill /full's clusters up to the last slot, so one more entry makes it
	// grow.
	for i := 0; ; i++ {
		st := fs.Statfs()
		_ = st
		d, _ := fs.resolveDir([]string{"full"})
		if d.end+2 > d.slots() {
			break
		}
		n := fmt.Sprintf("/full/f%d", i)
		files[n] = pattern(100+i, 50)
		mustWrite(t, fs, n, files[n])
	}
	for p, b := range files {
		mustWrite(t, fs, p, b)
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	return dev, files
}

// oneOf asserts that p holds one of the given contents (nil: absent).
func oneOf(t *testing.T, fs *FS, p string, states ...[]byte) {
	t.Helper()
	got, err := fs.ReadFile(p)
	for _, s := range states {
		if s == nil && errors.Is(err, os.ErrNotExist) {
			return
		}
		if s != nil && err == nil && bytes.Equal(got, s) {
			return
		}
	}
	t.Errorf("%s is in neither the old nor the new state (err %v, %d bytes)", p, err, len(got))
}

func crashOps() []crashOp {
	newData := pattern(50, 20000)
	return []crashOp{
		{name: "put new file", run: func(fs *FS) error {
			return fs.WriteFile("/dir/new file.bin", newData, 0o644)
		}, check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			oneOf(t, fs, "/dir/new file.bin", nil, newData)
		}},
		{name: "put into a full directory", run: func(fs *FS) error {
			return fs.WriteFile("/full/one more with a long name.txt", newData[:3000], 0o644)
		}, check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			oneOf(t, fs, "/full/one more with a long name.txt", nil, newData[:3000])
		}},
		{name: "put over an existing file", run: func(fs *FS) error {
			return fs.WriteFile("/victim.txt", newData, 0o644)
		}, check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			oneOf(t, fs, "/victim.txt", pre["/victim.txt"], newData)
		}},
		{name: "append", longChains: true, run: func(fs *FS) error {
			f, err := fs.OpenFile("/victim.txt", os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			if _, err := f.Write(newData); err != nil {
				return err
			}
			return f.Close()
		}, check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			oneOf(t, fs, "/victim.txt", pre["/victim.txt"], append(append([]byte{}, pre["/victim.txt"]...), newData...))
		}},
		{name: "rm", run: func(fs *FS) error {
			return fs.Remove("/victim.txt")
		}, check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			oneOf(t, fs, "/victim.txt", pre["/victim.txt"], nil)
		}},
		{name: "rm -r", run: func(fs *FS) error {
			return fs.RemoveAll("/tree")
		}, check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			oneOf(t, fs, "/tree/a/b.txt", pre["/tree/a/b.txt"], nil)
			oneOf(t, fs, "/tree/c.txt", pre["/tree/c.txt"], nil)
		}},
		{name: "mkdir", run: func(fs *FS) error {
			return fs.MkdirAll("/new/dir/deep")
		}, check: func(t *testing.T, fs *FS, pre map[string][]byte) {}},
		{name: "rename across directories", crossLinks: true, run: func(fs *FS) error {
			return fs.Rename("/victim.txt", "/dir/moved victim.txt")
		}, check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			a, errA := fs.ReadFile("/victim.txt")
			b, errB := fs.ReadFile("/dir/moved victim.txt")
			if !(errA == nil && bytes.Equal(a, pre["/victim.txt"])) && !(errB == nil && bytes.Equal(b, pre["/victim.txt"])) {
				t.Errorf("renamed file lost: %v %v", errA, errB)
			}
		}},
		{name: "rename over an existing file", crossLinks: true, run: func(fs *FS) error {
			return fs.Rename("/victim.txt", "/other/to be replaced.txt")
		}, check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			oneOf(t, fs, "/other/to be replaced.txt", pre["/other/to be replaced.txt"], pre["/victim.txt"])
			b, _ := fs.ReadFile("/other/to be replaced.txt")
			if !bytes.Equal(b, pre["/victim.txt"]) {
				oneOf(t, fs, "/victim.txt", pre["/victim.txt"])
			}
		}},
		{name: "rename a directory", crossLinks: true, run: func(fs *FS) error {
			return fs.Rename("/tree", "/dir/tree moved")
		}, check: func(t *testing.T, fs *FS, pre map[string][]byte) {
			_, e1 := fs.ReadFile("/tree/c.txt")
			_, e2 := fs.ReadFile("/dir/tree moved/c.txt")
			if e1 != nil && e2 != nil {
				t.Errorf("directory lost: %v %v", e1, e2)
			}
		}},
	}
}

// fsckAllowed matches the fsck.fat -n output lines that report nothing
// worse than lost clusters or unequal FAT copies; fsckLongChain those of a
// chain longer than its file.
var (
	fsckAllowed   = regexp.MustCompile(`^(Reclaimed \d+ unused clusters? \(\d+ bytes\)\.|Free cluster summary .*|FATs differ but appear to be intact\.|Using first FAT\.|Leaving filesystem unchanged\.|.*: \d+ files, \d+/\d+ clusters|fsck\.fat .*|)$`)
	fsckLongChain = regexp.MustCompile(`^(/\S.*|File size is \d+ bytes, cluster chain length is > \d+ bytes\.|Truncating file to \d+ bytes\.)$`)
	fsckRename    = regexp.MustCompile(`^(/\S.*|.* and|share clusters\.|Truncating second to 0 bytes\.|File size is \d+ bytes, cluster chain length is 0 bytes\.|Truncating file to 0 bytes\.|Invalid '\.\.' entry in the second slot\. Fixing\.)$`)
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
		for _, op := range crashOps() {
			t.Run(c.typ.String()+"/"+op.name, func(t *testing.T) {
				// Count the writes of an undisturbed run.
				probe := &crashDev{memDev: &memDev{t: t, data: bytes.Clone(base.data)}, limit: 1 << 30}
				fs := mustOpen(t, probe, c.size)
				if err := op.run(fs); err != nil {
					t.Fatalf("undisturbed run: %v", err)
				}
				if err := fs.Close(); err != nil {
					t.Fatal(err)
				}
				total := probe.writes
				states := map[string]int{}
				for k := 0; k <= total; k++ {
					dev := &crashDev{memDev: &memDev{t: t, data: bytes.Clone(base.data)}, limit: k}
					fs := mustOpen(t, dev, c.size)
					err := op.run(fs)
					if cerr := fs.Close(); err == nil {
						err = cerr
					}
					if k < total && !errors.Is(err, errCrashed) {
						t.Fatalf("k=%d: operation did not notice the crash: %v", k, err)
					}
					crashed := bytes.Clone(dev.data)
					after := &memDev{t: t, data: dev.data}
					fs2, err := Open(after, c.size)
					if err != nil {
						t.Fatalf("k=%d of %d: cannot open after crash: %v", k, total, err)
					}
					for p, b := range pre {
						if p == "/victim.txt" || strings.HasPrefix(p, "/tree/") || p == "/other/to be replaced.txt" {
							continue
						}
						if got, err := fs2.ReadFile(p); err != nil || !bytes.Equal(got, b) {
							t.Errorf("k=%d: pre-existing %s damaged: %v", k, p, err)
						}
					}
					op.check(t, fs2, pre)
					rep, err := fs2.Check(false)
					if err != nil {
						t.Fatalf("k=%d: Check: %v", k, err)
					}
					bad := len(rep.BadEntries) > 0 || rep.OrphanLFN > 0 || rep.FreeCountWrong ||
						len(rep.CrossLinks) > 0 && !op.crossLinks || len(rep.LongChains) > 0 && !op.longChains
					if bad {
						t.Errorf("k=%d of %d: Check found more than lost clusters:\n%s", k, total, rep)
					}
					state := "clean"
					if !rep.Clean() {
						state = strings.TrimSpace(strings.SplitN(rep.String(), "\n", 2)[1])
					}
					states[state]++
					if haveFsck {
						img := filepath.Join(t.TempDir(), "crash.img")
						os.WriteFile(img, crashed, 0o644)
						out, _ := runTool(t, nil, "fsck.fat", "-n", img)
						for _, l := range strings.Split(out, "\n") {
							l = strings.TrimSpace(l)
							if !fsckAllowed.MatchString(l) && !(op.longChains && fsckLongChain.MatchString(l)) && !(op.crossLinks && fsckRename.MatchString(l)) {
								t.Errorf("k=%d: fsck.fat -n reports more than lost clusters: %q\n%s", k, l, out)
								break
							}
						}
					}
					// Repair leaves a clean filesystem.
					if _, err := fs2.Check(true); err != nil {
						t.Fatalf("k=%d: repair: %v", k, err)
					}
					if rep, err := fs2.Check(false); err != nil || (!rep.Clean() && !rep.Errors()) {
						t.Errorf("k=%d: after repair: %v\n%s", k, err, rep)
					}
				}
				t.Logf("%d writes; states after a crash: %v", total, states)
			})
		}
	}
}
