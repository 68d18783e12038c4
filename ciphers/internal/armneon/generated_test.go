package armneon

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedUpToDate rebuilds the NEON kernels of the main module's
// generators and compares them with the committed files, so a change to
// this package or a generator cannot ship with stale assembly. (Serpent's
// 32-bit kernel comes from the separate module under ciphers/serpent/_asm.)
func TestGeneratedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two generators; runs without -short")
	}
	root, err := filepath.Abs("../../..") // the module root
	if err != nil {
		t.Fatal(err)
	}
	for _, gen := range []struct {
		pkg   string
		files []string
	}{
		{"ciphers/aes/neongen", []string{"aes_neon_arm.s", "aes_neon_arm64.s"}},
		{"ciphers/aes/tablegen", []string{"aes_table_arm.s"}},
		{"ciphers/chacha20/neongen", []string{"chacha20_arm.s"}},
	} {
		dir := t.TempDir()
		bin := filepath.Join(dir, "gen")
		build := exec.Command("go", "build", "-o", bin, "./"+gen.pkg)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", gen.pkg, err, out)
		}
		run := exec.Command(bin)
		run.Dir = dir
		if out, err := run.CombinedOutput(); err != nil {
			t.Fatalf("running %s: %v\n%s", gen.pkg, err, out)
		}
		for _, f := range gen.files {
			want, err := os.ReadFile(filepath.Join(root, filepath.Dir(gen.pkg), f))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is stale: run go generate in %s", f, filepath.Dir(gen.pkg))
			}
		}
	}
}
