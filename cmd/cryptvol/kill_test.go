//go:build unix

package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/archive"
)

// These tests run the real command (the test binary as `cryptvol`, see
// TestMain), kill it with SIGKILL -- which cannot be caught, so nothing of
// its own cleans up -- or interrupt it with SIGINT part-way, and check
// what the next command finds.

func needCLI(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("needs POSIX signals")
	}
	if _, err := exec.LookPath("cryptvol"); err != nil {
		t.Skip("skipping: the cryptvol test command is not on PATH")
	}
}

// volumeWith makes a VeraCrypt volume of size (sparse: --quick) with a
// FAT filesystem, and returns its path and the credentials.
func volumeWith(t *testing.T, dir, size string) (string, []string) {
	t.Helper()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("kill test password\n"), 0o600)
	vol := filepath.Join(dir, "v.hc")
	creds := []string{"--password-file", pw, "--pim", "1", "--hash", "sha256"}
	cryptvolCmd(t, nil, append([]string{"create", vol, "--size", size, "--quick", "--hash", "SHA-256", "--non-interactive"}, creds...)...)
	return vol, creds
}

// marked returns size bytes that start with 64 KiB of random data (the
// mark a leftover is recognised by) and are zero after it, written to a
// sparse file at path.
func marked(t *testing.T, path string, size int64) []byte {
	t.Helper()
	mark := make([]byte, 64<<10)
	rand.Read(mark)
	if err := os.WriteFile(path, mark, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return mark
}

// proc is a running cryptvol whose end is awaited in the background.
type proc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

// startCmd starts cryptvol with args; its stderr is collected.
func startCmd(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command("cryptvol", args...), done: make(chan struct{})}
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait returns the exit code (-1 when killed by a signal).
func (p *proc) wait() int {
	<-p.done
	return p.cmd.ProcessState.ExitCode()
}

// waitForTemp polls dir until a temporary file of at least min bytes is
// there, while p runs; it returns false if p ended first.
func waitForTemp(t *testing.T, p *proc, dir string, min int64) bool {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		if tempOf(dir, min) != "" {
			return true
		}
		select {
		case <-p.done:
			return false
		case <-time.After(500 * time.Microsecond):
		}
	}
	t.Fatalf("no temporary file of %d bytes in %s after 60 s", min, dir)
	return false
}

// killDuring runs cryptvol with args and kills it with SIGKILL once a
// temporary file of at least min bytes is in dir. It retries (the command
// may finish first on a fast machine) and fails if it never catches it.
func killDuring(t *testing.T, dir string, min int64, args ...string) {
	t.Helper()
	for try := 0; try < 5; try++ {
		p := startCmd(t, args...)
		if waitForTemp(t, p, dir, min) {
			p.cmd.Process.Signal(syscall.SIGKILL)
			p.wait()
			return
		}
		t.Logf("try %d: the command finished before it could be killed half-way (%v); again", try, p.err)
		for _, e := range mustReadDir(t, dir) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
	t.Fatal("could not kill the command half-way in 5 tries")
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

// tempOf returns a temporary file of at least min bytes in dir, if any.
func tempOf(dir string, min int64) string {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".cryptvol-") || strings.Contains(e.Name(), ".compact-") {
			if fi, err := e.Info(); err == nil && fi.Size() >= min {
				return filepath.Join(dir, e.Name())
			}
		}
	}
	return ""
}

// A killed export leaves its half-written decrypted image; the next
// export to that file removes it (the owner is gone), and afterwards no
// file but the finished image holds the plaintext.
func TestKilledExportLeavesNoPlaintext(t *testing.T) {
	needCLI(t)
	work := t.TempDir()
	vol, creds := volumeWith(t, work, "256M")
	src := filepath.Join(work, "marked.bin")
	mark := marked(t, src, 8<<20)
	cryptvolCmd(t, nil, append([]string{"put", vol, src, "/marked.bin"}, creds...)...)
	out := t.TempDir()
	img := filepath.Join(out, "plain.img")

	killDuring(t, out, 16<<20, append([]string{"export", vol, img}, creds...)...)
	left := findPlaintext(t, out, mark, "")
	if len(left) == 0 || tempOf(out, 0) == "" {
		t.Fatalf("the killed export left no decrypted temporary file (%v): the test did not kill it half-way", left)
	}
	t.Logf("the killed export left %v", left)

	res := cryptvolCmd(t, nil, append([]string{"export", vol, img}, creds...)...)
	if !strings.Contains(res, "removed "+left[0]) {
		t.Errorf("the next export did not say it removed the leftover; stderr:\n%s", res)
	}
	if left := findPlaintext(t, out, mark, img); len(left) > 0 {
		t.Fatalf("decrypted data left beside the image after the next export: %v", left)
	}
	if b, _ := os.ReadFile(img); !bytes.Contains(b, mark) {
		t.Fatal("the finished image lacks the data")
	}
	if fi, _ := os.Stat(img); fi.Mode().Perm() != 0o600 {
		t.Fatalf("image mode %v, want 0600", fi.Mode())
	}
}

// The same for get, which copies a file out of a volume.
func TestKilledGetLeavesNoPlaintext(t *testing.T) {
	needCLI(t)
	work := t.TempDir()
	vol, creds := volumeWith(t, work, "640M")
	src := filepath.Join(work, "big.bin")
	mark := marked(t, src, 500<<20)
	cryptvolCmd(t, nil, append([]string{"put", vol, src, "/big.bin"}, creds...)...)
	out := t.TempDir()
	dest := filepath.Join(out, "big.bin")

	killDuring(t, out, 16<<20, append([]string{"get", vol, "/big.bin", dest}, creds...)...)
	if left := findPlaintext(t, out, mark, ""); len(left) == 0 {
		t.Fatal("the killed get left nothing: the test did not kill it half-way")
	}
	cryptvolCmd(t, nil, append([]string{"get", vol, "/big.bin", dest}, creds...)...)
	if left := findPlaintext(t, out, mark, dest); len(left) > 0 {
		t.Fatalf("decrypted data left after the next get: %v", left)
	}
}

// A killed archive compact leaves its half-written copy beside the
// archive; the next command on the archive removes it, and the archive is
// as it was.
func TestKilledCompactIsCleanedUp(t *testing.T) {
	needCLI(t)
	dir := t.TempDir()
	key := filepath.Join(t.TempDir(), "key")
	kb := make([]byte, 32)
	rand.Read(kb)
	os.WriteFile(key, kb, 0o600)
	files := filepath.Join(t.TempDir(), "files")
	os.Mkdir(files, 0o755)
	for i := 0; i < 40; i++ {
		b := make([]byte, 4<<20)
		rand.Read(b)
		os.WriteFile(filepath.Join(files, fmt.Sprintf("f%02d", i)), b, 0o644)
	}
	ar := filepath.Join(dir, "a.cva")
	cryptvolCmd(t, nil, "archive", "create", ar, files, "-r", "-k", key)
	prefix := archive.MemberName(files)
	cryptvolCmd(t, nil, "archive", "rm", ar, prefix+"/f00", prefix+"/f01", "-k", key)
	os.Chmod(ar, 0o640)
	before, _ := os.ReadFile(ar)

	killDuring(t, dir, 8<<20, "archive", "compact", ar, "-k", key)
	tmp := tempOf(dir, 0)
	if tmp == "" {
		t.Fatal("the killed compact left nothing: the test did not kill it half-way")
	}
	res := cryptvolCmd(t, nil, "archive", "ls", ar, "-k", key)
	if !strings.Contains(res, "removed "+tmp) {
		t.Errorf("ls did not say it removed %s; output:\n%s", tmp, res)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left beside the archive after the next command: %v", ents)
	}
	if now, _ := os.ReadFile(ar); !bytes.Equal(now, before) {
		t.Fatal("the archive changed")
	}
	cryptvolCmd(t, nil, "archive", "compact", ar, "-k", key)
	if fi, _ := os.Stat(ar); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode after compact %v, want the archive's 0640", fi.Mode())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left beside the archive after compact: %v", ents)
	}
}

// Ctrl-C (SIGINT) while put is inside a file: it stops there, removes the
// partial file, says how far it got and exits 130; the file before it is
// in, the one after it is not started.
func TestInterruptedPutSaysWhatWasDone(t *testing.T) {
	needCLI(t)
	work := t.TempDir()
	vol, creds := volumeWith(t, work, "64M")
	first := filepath.Join(work, "first.txt")
	os.WriteFile(first, []byte("first"), 0o644)
	last := filepath.Join(work, "last.txt")
	os.WriteFile(last, []byte("last"), 0o644)
	// The middle "file" is a pipe, so the test decides when put is inside
	// it: it has read part of it when the signal comes.
	fifo := filepath.Join(work, "middle.bin")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes:", err)
	}
	cryptvolCmd(t, nil, append([]string{"mkdir", vol, "/in"}, creds...)...)
	p := startCmd(t, append([]string{"put", vol, first, fifo, last, "/in"}, creds...)...)
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	rand.Read(chunk)
	w.Write(chunk)
	w.Write(chunk)
	p.cmd.Process.Signal(os.Interrupt)
	time.Sleep(50 * time.Millisecond)
	w.Write(chunk) // put reads again, and stops
	w.Close()
	if code := p.wait(); code != 130 {
		t.Fatalf("put exited with %d, want 130; stderr:\n%s", code, &p.stderr)
	}
	msg := p.stderr.String()
	if !strings.Contains(msg, "interrupted: 1 of 3 files copied; /in/middle.bin partial, removed") || strings.Contains(msg, "context canceled") {
		t.Fatalf("message:\n%s", msg)
	}
	ls := cryptvolCmd(t, nil, append([]string{"ls", vol, "/in"}, creds...)...)
	if !strings.Contains(ls, "first.txt") || strings.Contains(ls, "middle") || strings.Contains(ls, "last.txt") || strings.Contains(ls, ".cryptvol-") {
		t.Fatalf("the volume holds:\n%s", ls)
	}
}

// Ctrl-C during export: the same, and no temporary file stays.
func TestInterruptedExportRemovesItsFile(t *testing.T) {
	needCLI(t)
	work := t.TempDir()
	vol, creds := volumeWith(t, work, "1G")
	out := t.TempDir()
	for try := 0; ; try++ {
		p := startCmd(t, append([]string{"export", vol, filepath.Join(out, "plain.img")}, creds...)...)
		if !waitForTemp(t, p, out, 8<<20) {
			if try == 4 {
				t.Fatal("export finished before it could be interrupted, 5 times")
			}
			os.Remove(filepath.Join(out, "plain.img"))
			continue
		}
		p.cmd.Process.Signal(os.Interrupt)
		if code := p.wait(); code != 130 {
			t.Fatalf("export exited with %d, want 130; stderr:\n%s", code, &p.stderr)
		}
		if !strings.Contains(p.stderr.String(), "plain.img not written (its temporary file was removed)") {
			t.Fatalf("message:\n%s", &p.stderr)
		}
		break
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Fatalf("left after the interrupt: %v", ents)
	}
}

// Ctrl-C while a wrong password is being tried against every PRF (seconds
// of key derivation): exit 130 and "interrupted", never Go's "context
// canceled" (issue 19).
func TestInterruptedUnlockSaysInterrupted(t *testing.T) {
	needCLI(t)
	work := t.TempDir()
	vol, _ := volumeWith(t, work, "1M")
	for try := 0; ; try++ {
		// No --hash and no --pim: every PRF at its default cost.
		p := startCmd(t, "ls", vol, "--non-interactive", "-p", "not the password")
		time.Sleep(500 * time.Millisecond)
		p.cmd.Process.Signal(os.Interrupt)
		code := p.wait()
		if code == exitAuth && try < 4 {
			continue // the search ended before the signal came
		}
		msg := p.stderr.String()
		if code != exitCancelled || !strings.Contains(msg, "cryptvol ls: interrupted") || strings.Contains(msg, "context canceled") {
			t.Fatalf("exit %d, stderr:\n%s", code, msg)
		}
		return
	}
}
