package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// goTool is the go command: the one that runs this program when it was
// started with `go run` (GOROOT/bin/go), else the first on PATH.
func goTool() string {
	if r := os.Getenv("GOROOT"); r != "" {
		if p := filepath.Join(r, "bin", "go"); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// stamp is what the binaries say about their origin.
type stamp struct {
	Version  string
	Commit   string // full hash, "" when unknown
	Modified bool   // built from a tree with uncommitted changes
}

// buildFlags are the `go build` flags of a release binary: no local paths
// in it (-trimpath), no symbol table or DWARF (-s -w), the version and
// commit linked into main.version and main.commit. The commit is passed
// explicitly because Go's own VCS stamp is often turned off
// (GOFLAGS=-buildvcs=false) or unavailable.
func buildFlags(s stamp) []string {
	ld := "-s -w -X main.version=" + s.Version
	if s.Commit != "" {
		ld += " -X main.commit=" + s.Commit
		if s.Modified {
			ld += " -X main.modified=true"
		}
	}
	return []string{"-trimpath", "-ldflags", ld}
}

// buildBinary builds pkg for t into out.
func buildBinary(t target, pkg, out string, s stamp) error {
	args := append([]string{"build"}, buildFlags(s)...)
	args = append(args, "-o", out, pkg)
	return runGo(t, args...)
}

// buildAllPackages compiles every package of the module, tests included
// (`go vet` type-checks the test files too, which `go build` skips), for t:
// the proof that nothing in the tree is tied to one platform.
func buildAllPackages(t target) error {
	if err := runGo(t, "build", "./..."); err != nil {
		return err
	}
	return runGo(t, "vet", "./...")
}

func runGo(t target, args ...string) error {
	cmd := exec.Command(goTool(), args...)
	cmd.Env = append(os.Environ(), t.Env()...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: go %s: %v\n%s", t.Name(), strings.Join(args, " "), err, out.String())
	}
	return nil
}

// gitStamp reads the checked-out commit and whether the tree has
// uncommitted changes; without git it returns an empty stamp.
func gitStamp() stamp {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return stamp{}
	}
	s := stamp{Commit: strings.TrimSpace(string(out))}
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		s.Modified = len(bytes.TrimSpace(st)) > 0
	}
	return s
}

// defaultVersion describes the checked-out commit the way `git describe`
// does ("v1.2.0", "v1.2.0-3-gabcdef0", "abcdef0-dirty"), or "dev" without
// git.
func defaultVersion() string {
	out, err := exec.Command("git", "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		return "dev"
	}
	if v := strings.TrimSpace(string(out)); v != "" {
		return v
	}
	return "dev"
}
