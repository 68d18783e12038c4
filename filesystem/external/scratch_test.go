package external

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/mount"
)

// TestNamedScratchLeftoverSwept: a named scratch image (ntfsresize's
// decrypted copy) that a killed command left is removed by the next one
// that makes one; a live process's is kept, and Close leaves nothing.
func TestNamedScratchLeftoverSwept(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no `true` to get a finished process's PID:", err)
	}
	left := filepath.Join(tmp, fmt.Sprintf("%s%d-1", NamedPrefix, dead.Process.Pid))
	live := filepath.Join(tmp, fmt.Sprintf("%s%d-2", NamedPrefix, os.Getppid()))
	for _, d := range []string{left, live} {
		os.Mkdir(d, 0o700)
		os.WriteFile(filepath.Join(d, "cryptvol-image-1.img"), []byte("plaintext"), 0o600)
	}
	s, err := NewNamedImage(1<<20, Env{Alive: mount.ProcessAlive})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("the killed command's copy is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatalf("a running process's copy was removed: %v", err)
	}
	if filepath.Dir(filepath.Dir(s.path)) != tmp {
		t.Fatalf("the image %s is not in a directory of its own in %s", s.path, tmp)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(tmp)
	if len(entries) != 1 {
		t.Fatalf("after Close %d entries in TMPDIR, want only the live one's", len(entries))
	}
}
