//go:build unix

package main

// format through the power-cut explorer (issue 31, item 2): a volume
// holding a filesystem with files is formatted with another one. In every
// crash state the volume opens with its credentials, and what is there is
// the old filesystem intact (every file, its check clean), no filesystem
// at all (the format is not done, and `format` again finishes it), or the
// new filesystem, empty and clean; never a filesystem that is recognised
// and damaged, into which a user could go on writing.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/internal/crashsim"
	"github.com/cryptvol/cryptvol/volume"
)

// errNoFS marks a state with no filesystem: the format not done.
var errNoFS = errors.New("no filesystem")

// formatTransitions are the formats explored: from the setup's filesystem
// to another kind, so that old and new cannot be mistaken.
// ("none" erases the signatures: done is no filesystem).
var formatTransitions = [][2]string{{"fat", "exfat"}, {"exfat", "ext4"}, {"ext4", "fat"}, {"fat", "none"}}

// probeName is fsprobe's name of a --filesystem kind.
var probeName = map[string]string{"fat": "vfat", "exfat": "exfat", "ext4": "ext4"}

func TestCrashStatesFormat(t *testing.T) {
	if _, err := exec.LookPath("e2fsck"); err != nil {
		t.Skip("e2fsck (e2fsprogs) is not installed")
	}
	containers := crashContainers
	if os.Getenv("CRYPTVOL_CRASH_LONG") == "" {
		// LUKS1 (a fast key derivation here) by default; VeraCrypt too
		// with CRYPTVOL_CRASH_LONG=1.
		containers = containers[1:]
	}
	for _, c := range containers {
		for _, tr := range formatTransitions {
			t.Run(c.name+"/"+tr[0]+"-to-"+tr[1], func(t *testing.T) {
				vol, pw, _, base := crashSetup(t, c, tr[0])
				args := append([]string{"format", vol, "--filesystem", tr[1], "--force", "--label", "NEWFS", "--password-file", pw}, c.flags...)
				ops := recordCommand(t, nil, args...)
				if len(ops) == 0 || !ops[len(ops)-1].Flush {
					t.Errorf("format: the last write is not followed by a flush")
				}
				tally, kinds := exploreFormat(t, base, ops, c, tr, formatCrashOptions())
				tally.report(t, c.name+" format "+tr[0]+" to "+tr[1], ops)
				t.Logf("%s format %s to %s: %d states hold the old filesystem intact, %d no filesystem, %d the new one clean", c.name, tr[0], tr[1], kinds[0], kinds[1], kinds[2])
				for _, f := range tally.first {
					t.Errorf("format: %s", f)
				}
			})
		}
	}
}

// formatCrashOptions sample more than crashOptions: most states of a
// format hold no filesystem and cost a key derivation, not a check.
func formatCrashOptions() crashsim.Options {
	if os.Getenv("CRYPTVOL_CRASH_LONG") != "" {
		return crashsim.Options{Subsets: 500, Torn: 50, Seed: 31, Distinct: true}
	}
	return crashOptions()
}

// TestCrashFormatCatchesDroppedFlush drops the flush between the new
// filesystem and its signature sector and shows that the explorer finds
// states where the new filesystem is recognised and not whole.
func TestCrashFormatCatchesDroppedFlush(t *testing.T) {
	c := crashContainers[1]
	tr := formatTransitions[0]
	vol, pw, _, base := crashSetup(t, c, tr[0])
	args := append([]string{"format", vol, "--filesystem", tr[1], "--force", "--label", "NEWFS", "--password-file", pw}, c.flags...)
	ops := recordCommand(t, nil, args...)
	flushes := len(ops) - crashsim.Writes(ops)
	epochs := crashsim.Epochs(ops)
	last := len(epochs) - 1
	for last > 0 && len(epochs[last]) == 0 {
		last--
	}
	if last < 2 || len(epochs[last]) != 1 || len(epochs[last][0].Data) > 4096 {
		t.Fatalf("format's log (%d flushes) does not end with the signature sector alone", flushes)
	}
	if err := os.WriteFile(vol, base, 0o600); err != nil {
		t.Fatal(err)
	}
	drop := last - 1 // the flush that ends the epoch before
	dropped := recordCommand(t, func(n int) bool { return n == drop }, args...)
	tally, _ := exploreFormat(t, base, dropped, c, tr, crashsim.Options{Subsets: 40, Torn: 4, Seed: 31, Distinct: true})
	t.Logf("flush %d of %d dropped: %d crash states, %d half done; first: %q", drop, flushes, tally.states, tally.halfDone, tally.first)
	if tally.halfDone == 0 {
		t.Fatal("the explorer found nothing wrong with a format that writes its signature before the filesystem is on the disk")
	}
}

// exploreFormat judges every crash state of a format's log; kinds counts
// the states that hold the old filesystem, none, and the new one.
func exploreFormat(t *testing.T, base []byte, ops []crashsim.Op, c crashContainer, tr [2]string, o crashsim.Options) (crashTally, [3]int) {
	var tally crashTally
	var kinds [3]int
	scratch := filepath.Join(t.TempDir(), "state.img")
	sf, err := newStateFile(scratch, base)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.f.Close()
	states := crashsim.States(ops, o)
	for i, s := range states {
		tally.states++
		if err := sf.set(s); err != nil {
			t.Fatal(err)
		}
		kind, err := judgeFormatState(t, scratch, c, tr)
		if done := map[bool]int{true: 1, false: 2}[tr[1] == "none"]; err == nil && i == len(states)-1 && kind != done {
			err = fmt.Errorf("the whole log (the command returned) does not hold what format made")
		}
		if err != nil {
			tally.fail(s, err)
			continue
		}
		kinds[kind]++
	}
	return tally, kinds
}

// judgeFormatState says what the state at path holds: 0 the old
// filesystem intact, 1 none, 2 the new one clean; anything else is an
// error of the kind the acceptance counts.
func judgeFormatState(t *testing.T, path string, c crashContainer, tr [2]string) (int, error) {
	o := c.open
	o.ReadOnly = true
	v, err := volume.OpenWith(context.Background(), path, c.creds("crash-pass"), o)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errNotOpen, err)
	}
	defer v.Close()
	r, err := fsprobe.Probe(v)
	switch {
	case err != nil:
		return 1, nil
	case r.Type == probeName[tr[0]]:
		if err := checkClean(t, v, tr[0]); err != nil {
			return 0, fmt.Errorf("%w: the old %s is recognised and damaged: %v", errLost, tr[0], err)
		}
		fsys, err := filesystem.Open(v, v.Size(), filesystem.Options{})
		if err != nil {
			return 0, fmt.Errorf("%w: the old %s does not open: %v", errLost, tr[0], err)
		}
		defer fsys.Close()
		for n, body := range crashBefore {
			if err := hasFile(fsys, n, body); err != nil {
				return 0, fmt.Errorf("%w: %v", errLost, err)
			}
		}
		return 0, nil
	case r.Type == probeName[tr[1]]:
		if err := checkClean(t, v, tr[1]); err != nil {
			return 2, fmt.Errorf("%w: the new %s is recognised and not clean: %v", errHalfDone, tr[1], err)
		}
		fsys, err := filesystem.Open(v, v.Size(), filesystem.Options{})
		if err != nil {
			return 2, fmt.Errorf("%w: the new %s does not open: %v", errHalfDone, tr[1], err)
		}
		defer fsys.Close()
		ents, err := fsys.ReadDir(".")
		if err != nil {
			return 2, fmt.Errorf("%w: the new %s's root does not read: %v", errHalfDone, tr[1], err)
		}
		for _, e := range ents {
			if e.Name() != "lost+found" {
				return 2, fmt.Errorf("%w: the new %s holds %s", errHalfDone, tr[1], e.Name())
			}
		}
		return 2, nil
	}
	return 0, fmt.Errorf("%w: a %s filesystem, neither the old nor the new", errHalfDone, r.Type)
}

// checkClean checks the filesystem of v without repairing: the built-in
// checker for FAT and exFAT, e2fsck -fn for ext4.
func checkClean(t *testing.T, v *volume.Volume, kind string) error {
	if kind == "ext4" {
		img := filepath.Join(t.TempDir(), "fs.img")
		buf := make([]byte, v.Size())
		if _, err := v.ReadAt(buf, 0); err != nil && err != io.EOF {
			return err
		}
		if err := os.WriteFile(img, buf, 0o600); err != nil {
			return err
		}
		defer os.Remove(img)
		out, err := exec.Command("e2fsck", "-fn", img).CombinedOutput()
		if err != nil {
			return fmt.Errorf("e2fsck -fn: %v\n%s", err, lastLines(string(out), 6))
		}
		return nil
	}
	fsys, err := filesystem.Open(v, v.Size(), filesystem.Options{})
	if err != nil {
		return err
	}
	defer fsys.Close()
	ck, ok := fsys.(filesystem.Checker)
	if !ok {
		return fmt.Errorf("%s has no checker", fsys.Type())
	}
	rep, err := ck.Check(false)
	if err != nil {
		return err
	}
	if !rep.Clean() {
		return fmt.Errorf("the check finds:\n%s", lastLines(rep.String(), 6))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
