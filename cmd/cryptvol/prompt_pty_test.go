//go:build linux || darwin

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ptyRun runs cryptvol (the copy testscript.Main put on $PATH) with a
// pseudo-terminal as its controlling terminal and standard streams, and
// returns the master side, what the command printed so far (read on), the
// slave (to inspect the terminal's modes afterwards) and the process.
type ptyRun struct {
	master, slave *os.File
	cmd           *exec.Cmd
	mu            sync.Mutex
	out           bytes.Buffer
	done          chan struct{}
}

func startPty(t *testing.T, dir string, args ...string) *ptyRun {
	t.Helper()
	bin, err := exec.LookPath("cryptvol")
	if err != nil {
		t.Skip("cryptvol is not on $PATH (testscript.Main puts it there)")
	}
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CRYPTVOL_KEYRING=cryptvol-pty-test", "CRYPTVOL_RUNTIME_DIR="+filepath.Join(dir, ".run"))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &ptyRun{master: master, slave: slave, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			r.mu.Lock()
			r.out.Write(buf[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		master.Close()
		slave.Close()
	})
	return r
}

func (r *ptyRun) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// await waits until the output holds want n times.
func (r *ptyRun) await(t *testing.T, want string, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Count(r.output(), want) >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q (x%d) in the output:\n%s", want, n, r.output())
}

// wait waits for the process and returns its exit code.
func (r *ptyRun) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- r.cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		t.Fatalf("still running after %v; output:\n%s", within, r.output())
	}
	return -1
}

func ptyVolume(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("the password\n"), 0o600)
	var out bytes.Buffer
	code := run([]string{"create", filepath.Join(dir, "v.hc"), "--size", "1M", "--password-file", pw, "--pim", "1", "--quick", "--non-interactive"},
		&app{stdin: strings.NewReader(""), stdout: &out, stderr: &out})
	if code != 0 {
		t.Fatalf("create: %s", out.String())
	}
	return dir
}

// TestPromptThreeTries types a wrong password three times at the prompt,
// as cryptsetup allows: each is refused and asked again, the third ends
// the command (exit 2). Then the right one on the second try opens, with
// a progress line naming what is tried.
func TestPromptThreeTries(t *testing.T) {
	dir := ptyVolume(t)
	r := startPty(t, dir, "info", "v.hc", "--pim", "1", "--hash", "sha512")
	for i := 1; i <= 3; i++ {
		r.await(t, "Enter password: ", i)
		io.WriteString(r.master, "notmypassword\r")
	}
	if code := r.wait(t, 2*time.Minute); code != exitAuth {
		t.Fatalf("exit %d after three wrong passwords, want %d; output:\n%s", code, exitAuth, r.output())
	}
	r.await(t, "cryptvol info: wrong password", 1)
	out := r.output()
	if strings.Count(out, "Enter password: ") != 3 || !strings.Contains(out, "try 2 of 3") || strings.Contains(out, "notmypassword") {
		t.Fatalf("output:\n%s", out)
	}

	r = startPty(t, dir, "info", "v.hc", "--pim", "1", "--hash", "sha512")
	r.await(t, "Enter password: ", 1)
	io.WriteString(r.master, "notmypassword\r")
	r.await(t, "Enter password: ", 2)
	io.WriteString(r.master, "the password\r")
	if code := r.wait(t, 2*time.Minute); code != 0 {
		t.Fatalf("exit %d, output:\n%s", code, r.output())
	}
	r.await(t, "Encryption:", 1)
	out = r.output()
	if !strings.Contains(out, "Trying VeraCrypt SHA-512 (single ciphers), normal header...") || !strings.Contains(out, "Encryption:") {
		t.Fatalf("no progress line or no info in:\n%s", out)
	}
}

// TestPromptCtrlC presses Ctrl-C at the prompt: the command ends at once
// (exit 130) and the terminal echoes again.
func TestPromptCtrlC(t *testing.T) {
	dir := ptyVolume(t)
	r := startPty(t, dir, "ls", "v.hc", "--pim", "1")
	r.await(t, "Enter password: ", 1)
	if tio, err := unix.IoctlGetTermios(int(r.slave.Fd()), ioctlReadTermios); err == nil && tio.Lflag&unix.ECHO != 0 {
		t.Fatal("echo is on while the password is typed")
	}
	io.WriteString(r.master, "half a pass")
	start := time.Now()
	io.WriteString(r.master, "\x03")
	if code := r.wait(t, 10*time.Second); code != exitCancelled {
		t.Fatalf("exit %d after Ctrl-C, want %d; output:\n%s", code, exitCancelled, r.output())
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Ctrl-C took %v to end the prompt", d)
	}
	tio, err := unix.IoctlGetTermios(int(r.slave.Fd()), ioctlReadTermios)
	if err != nil {
		t.Fatal(err)
	}
	if tio.Lflag&unix.ECHO == 0 {
		t.Fatal("the terminal was left without echo")
	}
	r.await(t, "interrupted", 1)
}
