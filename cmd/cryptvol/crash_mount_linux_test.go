//go:build linux

package main

// The mount daemon under the power-cut explorer (issue 31, item 2): a
// file written through the FUSE mount, fsynced, closed and unmounted,
// with the daemon's container writes and flushes streamed to a log. In
// every crash state the volume opens, the filesystem checks clean or
// repairs without losing a file that was there before; in every state
// after the flush that answered the fsync, the file is whole.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/crashsim"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/volume"
)

// streamDevice logs each write and flush to w as it passes (kind 'w' or
// 'f', offset, length, data) before passing it on, so that a test reading
// the log after an fsync returned sees the flush that answered it.
type streamDevice struct {
	volume.Device
	mu sync.Mutex
	w  io.Writer
}

func (s *streamDevice) log(kind byte, off int64, p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var h [13]byte
	h[0] = kind
	binary.LittleEndian.PutUint64(h[1:], uint64(off))
	binary.LittleEndian.PutUint32(h[9:], uint32(len(p)))
	s.w.Write(append(h[:], p...))
}

func (s *streamDevice) WriteAt(p []byte, off int64) (int, error) {
	s.log('w', off, p)
	return s.Device.WriteAt(p, off)
}

func (s *streamDevice) Sync() error {
	s.log('f', 0, nil)
	return s.Device.Sync()
}

// runOplog is the cryptvol-oplog test command.
func runOplog() int {
	f, err := os.OpenFile(os.Getenv("CRYPTVOL_TEST_OPLOG"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 99
	}
	defer f.Close()
	testWrapDevice = func(d volume.Device) volume.Device { return &streamDevice{Device: d, w: f} }
	return run(os.Args[1:], &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr})
}

// readOplog decodes a streamed log.
func readOplog(t *testing.T, path string) []crashsim.Op {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(bytes.NewReader(b))
	var ops []crashsim.Op
	for {
		var h [13]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return ops
		}
		p := make([]byte, binary.LittleEndian.Uint32(h[9:]))
		if _, err := io.ReadFull(r, p); err != nil {
			t.Fatalf("the op log is cut: %v", err)
		}
		if h[0] == 'f' {
			ops = append(ops, crashsim.Op{Flush: true})
		} else {
			ops = append(ops, crashsim.Op{Off: int64(binary.LittleEndian.Uint64(h[1:])), Data: p})
		}
	}
}

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
