//go:build unix

package main

// The power-cut explorer over a put of many files, which renames them
// into place in batches (fswrite_batch.go; issue 31, item 4): every crash
// state opens, loses no file that was there before, and holds each file
// of the put whole or not at all; a file put --force replaces keeps its
// old content or has its new one, never neither.

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
)

// putManyTree writes under dir the tree put -r copies in: tree/ with
// files of 3-10 KB and a subdirectory, and force/, whose files replace
// three of crashBefore's. It returns the files put makes (volume path:
// content) and those it replaces.
func putManyTree(t *testing.T, dir string) (made, replaced map[string]string) {
	rng := rand.New(rand.NewSource(31))
	made, replaced = map[string]string{}, map[string]string{}
	write := func(rel string, body []byte) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 9; i++ {
		body := make([]byte, 3000+rng.Intn(7001))
		rng.Read(body)
		rel := fmt.Sprintf("tree/photo%02d.jpg", i)
		if i >= 6 {
			rel = fmt.Sprintf("tree/sub/photo%02d.jpg", i)
		}
		write(rel, body)
		made["/"+rel] = string(body)
	}
	for _, n := range []string{"/keep.txt", "/dir/inner.txt", "/dir/sub/old.txt"} {
		body := bytes.Repeat([]byte("new "+n+" "), 200)
		write("force"+n, body)
		replaced[n] = string(body)
	}
	return made, replaced
}

// wholeOrAbsent checks that each file of want is absent or whole.
func wholeOrAbsent(fsys filesystem.FS, want map[string]string) error {
	for n, body := range want {
		if _, err := fsys.Stat(n); err != nil {
			continue
		}
		if err := hasFile(fsys, n, body); err != nil {
			return err
		}
	}
	return nil
}

func allThere(fsys filesystem.FS, want map[string]string) error {
	for n, body := range want {
		if err := hasFile(fsys, n, body); err != nil {
			return err
		}
	}
	return nil
}

// TestCrashStatesPutMany explores put -r of a tree (in batches of four
// files, so that one put makes three) and put -r --force over files that
// exist, on FAT, exFAT and ext4 in a VeraCrypt container (LUKS1 too with
// CRYPTVOL_CRASH_LONG=1).
func TestCrashStatesPutMany(t *testing.T) {
	if _, err := exec.LookPath("e2fsck"); err != nil {
		t.Skip("e2fsck (e2fsprogs) is not installed")
	}
	defer func(n int) { putBatchFiles = n }(putBatchFiles)
	putBatchFiles = 4
	for _, c := range crashContainers {
		if c.name != "veracrypt" && os.Getenv("CRYPTVOL_CRASH_LONG") == "" {
			continue
		}
		for _, fsType := range []string{"fat", "exfat", "ext4"} {
			t.Run(c.name+"/"+fsType, func(t *testing.T) {
				vol, pw, big, base := crashSetup(t, c, fsType)
				dir := filepath.Dir(big)
				made, replaced := putManyTree(t, dir)
				force := filepath.Join(dir, "force")
				cases := []crashCase{
					{name: "put -r", args: []string{"-r", filepath.Join(dir, "tree"), "/"},
						atomic: func(fsys filesystem.FS) error { return wholeOrAbsent(fsys, made) },
						done:   func(fsys filesystem.FS) error { return allThere(fsys, made) }},
					{name: "put -r --force", args: []string{"-r", "--force", filepath.Join(force, "keep.txt"), filepath.Join(force, "dir"), "/"},
						replaced: replaced,
						done:     func(fsys filesystem.FS) error { return allThere(fsys, replaced) }},
				}
				explorePuts(t, vol, pw, base, c, fsType, cases)
			})
		}
	}
}

// TestCrashExplorerCatchesUnbatchedPut puts the tree of
// TestCrashStatesPutMany file by file, each renamed into place for its
// own flushes, as put did before batches: exFAT's rename of a file in
// place is one write with no flush before it, so the disk may keep the
// new name and not the content, and the explorer must find such states
// (the harness can fail).
func TestCrashExplorerCatchesUnbatchedPut(t *testing.T) {
	defer func() { putBatching = true }()
	putBatching = false
	c := crashContainers[0]
	vol, pw, big, base := crashSetup(t, c, "exfat")
	dir := filepath.Dir(big)
	made, _ := putManyTree(t, dir)
	cc := crashCase{name: "put -r", atomic: func(fsys filesystem.FS) error { return wholeOrAbsent(fsys, made) },
		done: func(fsys filesystem.FS) error { return allThere(fsys, made) }}
	ops := recordCommand(t, nil, append([]string{"put", vol, "-r", filepath.Join(dir, "tree"), "/", "--password-file", pw}, c.flags...)...)
	tally := exploreStates(t, base, ops, "exfat", c, cc, crashOptions())
	tally.report(t, "unbatched exfat put -r", ops)
	if tally.halfDone == 0 {
		t.Fatal("the explorer found no file named before its content was on the disk in a put that renames each file without a flush before")
	}
}

// explorePuts runs each case's put on the volume as base holds it,
// wants its last write followed by a flush (a Done that is durable), and
// judges every crash state of what it wrote.
func explorePuts(t *testing.T, vol, pw string, base []byte, c crashContainer, fsType string, cases []crashCase) {
	t.Helper()
	for _, cc := range cases {
		if err := os.WriteFile(vol, base, 0o600); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{"put", vol}, cc.args...), "--password-file", pw)
		ops := recordCommand(t, nil, append(args, c.flags...)...)
		if len(ops) == 0 || !ops[len(ops)-1].Flush {
			t.Errorf("%s: the command's last write is not followed by a flush: its Done is not durable", cc.name)
		}
		tally := exploreStates(t, base, ops, fsType, c, cc, crashOptions())
		tally.report(t, c.name+"/"+fsType+" "+cc.name, ops)
		for _, f := range tally.first {
			t.Errorf("%s: %s", cc.name, f)
		}
	}
}
