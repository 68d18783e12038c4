//go:build linux

package main

// The mount daemon under the power-cut explorer (issue 31, item 2): a
// file written through the FUSE mount, fsynced, closed and unmounted,
// with the daemon's container writes and flushes streamed to a log. In
// every crash state the volume opens, the filesystem checks clean or
// repairs without losing a file that was there before; in every state
// after the flush that answered the fsync, the file is whole.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/crashsim"
	"github.com/cryptvol/cryptvol/mount"
)

func isMounted(dir string) bool {
	mps, _ := mount.MountPoints()
	for _, mp := range mps {
		if mp.Dir == dir {
			return true
		}
	}
	return false
}

func TestCrashStatesMount(t *testing.T) {
	if err := mount.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if _, err := exec.LookPath("cryptvol-oplog"); err != nil {
		t.Skip("skipping: the cryptvol-oplog test command is not on PATH")
	}
	c := crashContainers[0]
	vol, pw, _, base := crashSetup(t, c, "fat")
	dir := filepath.Dir(vol)
	dir, _ = filepath.EvalSymlinks(dir)
	vol = filepath.Join(dir, filepath.Base(vol))
	run := filepath.Join(dir, "run")
	oplog := filepath.Join(dir, "ops.log")
	env := append(os.Environ(), "CRYPTVOL_RUNTIME_DIR="+run, "CRYPTVOL_TEST_OPLOG="+oplog)
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o755)
	daemon := exec.Command("cryptvol-oplog", append([]string{"mount", vol, mnt, "--foreground", "--password-file", pw}, c.flags...)...)
	daemon.Env = env
	var out bytes.Buffer
	daemon.Stdout, daemon.Stderr = &out, &out
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	// done closes when the daemon has exited; waitErr is its result.
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = daemon.Wait(); close(done) }()
	t.Cleanup(func() {
		if isMounted(mnt) {
			mount.Unmount(mnt, true)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			daemon.Process.Kill()
			<-done
		}
	})
	for deadline := time.Now().Add(60 * time.Second); !isMounted(mnt); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the mount did not appear:\n%s", out.String())
		}
	}
	data := bytes.Repeat([]byte("written through the mount\n"), 12000) // 312 KB
	f, err := os.Create(filepath.Join(mnt, "dir", "mounted.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	// The flushes logged so far include the one that answered fsync.
	atFsync := len(readOplog(t, oplog))
	f.Close()
	cvIn(t, "unmount", mnt)
	select {
	case <-done:
		if waitErr != nil {
			t.Fatalf("the mount daemon: %v\n%s", waitErr, out.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the mount daemon did not exit after unmount:\n%s", out.String())
	}
	ops := readOplog(t, oplog)
	if len(ops) == 0 || !ops[len(ops)-1].Flush {
		t.Errorf("the daemon's last write is not followed by a flush: unmount is not durable")
	}
	fsyncEpoch := 0
	for _, o := range ops[:atFsync] {
		if o.Flush {
			fsyncEpoch++
		}
	}
	if fsyncEpoch == 0 {
		t.Fatal("fsync through the mount returned before any flush of the container")
	}
	cc := crashCase{name: "mount write-back",
		done: func(fsys filesystem.FS) error { return hasFile(fsys, "/dir/mounted.bin", string(data)) }}
	var tally crashTally
	scratch := filepath.Join(t.TempDir(), "state.img")
	states := crashsim.States(ops, crashOptions())
	for i, s := range states {
		tally.states++
		if err := writeState(scratch, base, s); err != nil {
			t.Fatal(err)
		}
		repaired, err := judgeState(t, scratch, "fat", c, func(fsys filesystem.FS) error {
			for n, body := range crashBefore {
				if err := hasFile(fsys, n, body); err != nil {
					return fmt.Errorf("%w: %v", errLost, err)
				}
			}
			if s.Epoch >= fsyncEpoch || i == len(states)-1 {
				// After the flush that answered fsync the file is
				// promised whole: fsync is the mount's atomic point.
				if err := cc.done(fsys); err != nil {
					return fmt.Errorf("%w: %v", errHalfDone, err)
				}
			}
			return nil
		})
		if repaired {
			tally.repaired++
		}
		if err != nil {
			tally.fail(s, err)
		}
	}
	tally.report(t, fmt.Sprintf("mount write-back (fsync answered by flush %d), close, unmount", fsyncEpoch), ops)
	for _, f := range tally.first {
		t.Errorf("mount: %s", f)
	}
}
