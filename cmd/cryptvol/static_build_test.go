//go:build linux

package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeStaticBuild runs the README's static build line as written
// (issue 19: plain `go build` links libc dynamically, which the README
// used to call static) and checks that the binary has no ELF interpreter.
func TestReadmeStaticBuild(t *testing.T) {
	const line = "CGO_ENABLED=0 go build ./cmd/cryptvol"
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "    "+line) {
		t.Fatalf("README.md no longer shows %q", line)
	}
	out := filepath.Join(t.TempDir(), "cryptvol")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/cryptvol")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("%s made a dynamically linked binary (it has an ELF interpreter)", line)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("%s links %v", line, libs)
	}
}
