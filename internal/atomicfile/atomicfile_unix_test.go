//go:build unix

package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWriteNewFileIsPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	if err := Write(p, Options{}, func(w io.Writer) error { _, err := w.Write([]byte("data")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "data" {
		t.Fatalf("content %q", b)
	}
	if m := mode(t, p); m.Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600 whatever the umask", m)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("left in the directory: %v", names)
	}
}

func TestExplicitModeIgnoresUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "out")
	if err := Write(p, Options{Perm: 0o644}, func(io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, p); m.Perm() != 0o644 {
		t.Fatalf("mode %v, want 0644", m)
	}
}

func TestKeepModeOnRewrite(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "archive")
	os.WriteFile(p, []byte("old"), 0o600)
	os.Chmod(p, 0o640)
	if err := Write(p, Options{KeepMode: true}, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, p); m.Perm() != 0o640 {
		t.Fatalf("mode %v after rewrite, want the old 0640", m)
	}
	// Without KeepMode the mode is the one asked for, not a planted one.
	os.Chmod(p, 0o666)
	if err := Write(p, Options{Perm: 0o600}, func(io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, p); m.Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", m)
	}
}

// A symbolic link planted at the destination is replaced, never written
// through; nothing outside the directory changes.
func TestPlantedSymlinkNotFollowed(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep me"), 0o644)
	p := filepath.Join(dir, "key")
	if err := os.Symlink(victim, p); err != nil {
		t.Skip("no symbolic links:", err)
	}
	if err := Write(p, Options{}, func(w io.Writer) error { _, err := w.Write([]byte("secret")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Fatalf("the link's target was written: %q", b)
	}
	if m := mode(t, p); !m.IsRegular() || m.Perm() != 0o600 {
		t.Fatalf("destination is %v, want a regular 0600 file", m)
	}
}
