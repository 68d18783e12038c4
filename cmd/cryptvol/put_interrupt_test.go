//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPutInterruptedBeforeCopyingSaysSo: Ctrl-C while put is still
// getting its key (before the first file) ends it with exit 130 and the
// same account on every filesystem: "interrupted: 0 of 1 files copied"
// (issue 29, item 9: ext4 said only "interrupted", FAT gave the count).
// The password comes through a named pipe, so the signal arrives while
// put waits for it, before the key derivation.
func TestPutInterruptedBeforeCopyingSaysSo(t *testing.T) {
	needCLI(t)
	for _, fsName := range []string{"FAT", "exFAT", "ext4", "NTFS"} {
		t.Run(fsName, func(t *testing.T) {
			dir := t.TempDir()
			vol, _ := exitTestFS(t, dir, fsName)
			local := filepath.Join(dir, "local.txt")
			os.WriteFile(local, []byte("local file\n"), 0o644)
			fifo := filepath.Join(dir, "pw.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip("no named pipes:", err)
			}
			env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
			p := exec.Command("cryptvol", "put", vol, local, "/local.txt", "--password-file", fifo, "--pim", "1", "--hash", "SHA-256")
			p.Env, p.Dir = env, dir
			var stderr strings.Builder
			p.Stderr = &stderr
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once put opened it
			if err != nil {
				p.Process.Kill()
				p.Wait()
				t.Fatal(err)
			}
			p.Process.Signal(os.Interrupt)
			time.Sleep(50 * time.Millisecond)
			w.Write([]byte("secret\n"))
			w.Close()
			p.Wait()
			msg := stderr.String()
			if code := p.ProcessState.ExitCode(); code != 130 {
				t.Fatalf("put exited with %d, want 130:\n%s", code, msg)
			}
			if !strings.Contains(msg, "cryptvol put: interrupted: 0 of 1 files copied") {
				t.Fatalf("put's account of the interrupt:\n%s", msg)
			}
			r := cvRunIn(dir, env, time.Minute, "ls", vol, "/", "--password-file", filepath.Join(dir, "pw"), "--pim", "1", "--hash", "SHA-256")
			if r.code != 0 || strings.Contains(r.out, "local.txt") {
				t.Fatalf("after the interrupt: %v", r)
			}
		})
	}
}
