package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNTFSPutKillNothingBlocks (issue 25, item 4): a put into NTFS goes
// through ntfs-3g stacked on cryptvol's raw FUSE file in the same process,
// so SIGKILL mid-write leaves a zombie whose thread waits in D state and
// mounts whose stat hangs. The next command must take all that down: the
// killed process is then reaped, no private mount is left, every mount
// point answers stat, and the file put before is intact.
// CRYPTVOL_NTFS_KILLS sets the number of kills (default 2).
func TestNTFSPutKillNothingBlocks(t *testing.T) {
	needFSTools(t, "mkntfs", "ntfs-3g")
	if os.Geteuid() != 0 {
		t.Skip("needs root: without fusectl a dead raw server's connection cannot be aborted")
	}
	kills := 2
	if n, err := strconv.Atoi(os.Getenv("CRYPTVOL_NTFS_KILLS")); err == nil && n > 0 {
		kills = n
	}
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	tmp := filepath.Join(dir, "tmp")
	vol, pw := filepath.Join(dir, "n.hc"), filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("pw\n"), 0o600)
	creds := []string{"--password-file", pw, "--pim", "1"}
	if r := cvRun(env, 2*time.Minute, append([]string{"create", vol, "--size", "64M", "--quick", "--filesystem", "ntfs"}, creds...)...); r.code != 0 {
		t.Fatalf("create: %v", r)
	}
	keep := filepath.Join(dir, "keep")
	keepData := []byte("pre-existing file\n")
	os.WriteFile(keep, keepData, 0o600)
	if r := cvRun(env, 2*time.Minute, append([]string{"put", vol, keep, "/keep"}, creds...)...); r.code != 0 {
		t.Fatalf("put keep: %v", r)
	}
	big := filepath.Join(dir, "big")
	data := make([]byte, 16<<20)
	rand.Read(data)
	os.WriteFile(big, data, 0o600)
	t.Cleanup(func() { cvRun(env, time.Minute, append([]string{"ls", vol, "/"}, creds...)...) })

	landed, stuck := 0, 0
	for i := 0; i < kills; i++ {
		cmd := exec.Command(cvBin(), append([]string{"put", vol, big, "/big" + strconv.Itoa(i)}, creds...)...)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		// A kill lands once the driver mount is there.
		deadline := time.Now().Add(time.Minute)
		for !privateMountsUnder(tmp) && time.Now().Before(deadline) {
			select {
			case <-exited:
			default:
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(time.Duration(300+100*i%700) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			stuck++ // the deadlock: a thread in D state keeps it unreaped
		}
		landed++
		if r := cvRun(env, 2*time.Minute, append([]string{"ls", vol, "/"}, creds...)...); r.code != 0 || r.timedOut {
			t.Fatalf("kill %d: the next command: %v", i, r)
		}
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Fatalf("kill %d: the killed put is still not reaped after the next command", i)
		}
		if privateMountsUnder(tmp) {
			t.Fatalf("kill %d: private mounts left after the next command", i)
		}
		statEveryMount(t)
	}
	got := filepath.Join(dir, "got")
	os.Remove(got)
	if r := cvRun(env, 2*time.Minute, append([]string{"get", vol, "/keep", got}, creds...)...); r.code != 0 {
		t.Fatalf("get keep: %v", r)
	}
	if b, _ := os.ReadFile(got); !bytes.Equal(b, keepData) {
		t.Fatalf("pre-existing file changed: %q", b)
	}
	t.Logf("%d kills landed, %d left a process unreapable until the next command", landed, stuck)
}

func privateMountsUnder(tmp string) bool {
	b, _ := os.ReadFile("/proc/self/mounts")
	return strings.Contains(string(b), filepath.Join(tmp, "cryptvol-write-"))
}

// statEveryMount: `timeout 5 stat` on every mount point returns.
func statEveryMount(t *testing.T) {
	b, _ := os.ReadFile("/proc/self/mounts")
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := exec.CommandContext(ctx, "timeout", "5", "stat", f[1]).Run()
		cancel()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 124 {
			t.Errorf("stat %s hangs", f[1])
		}
	}
}
