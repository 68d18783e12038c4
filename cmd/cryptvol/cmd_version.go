package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/cryptvol/cryptvol/internal/platform"
)

// version, commit and modified are set at link time by the release build
// (go run ./internal/cmd/release: -X main.version=... -X main.commit=...).
// Without a linked-in commit, the VCS stamp of the build info is used.
var (
	version  = "dev"
	commit   = ""
	modified = "" // "true" when built from a tree with uncommitted changes
)

func init() {
	register(&command{
		name:    "version",
		summary: "print the version, commit, Go version and accelerated code paths",
		usage: `Usage: cryptvol version

Prints the version and commit this binary was built from, the Go version,
the platform and build settings (GOARM=6 for a Raspberry Pi 1 build, ...),
the CPU and its features, and the code path each cipher and the PBKDF2
PRFs that have SIMD lanes (SHA-512, SHA-256, BLAKE2s, RIPEMD-160) take on it.

Example:
  cryptvol version
`,
		run: runVersion,
	})
}

func runVersion(ctx context.Context, a *app, args []string) error {
	c := commands["version"]
	fs := newFlags(c, a)
	if err := parseFlags(fs, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fs, 0, 0); err != nil {
		return err
	}
	b := platform.ReadBuild(commit, modified)
	fmt.Fprintf(a.stdout, "cryptvol %s\ncommit %s\n%s %s/%s\n", version, b.Revision, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if len(b.Settings) > 0 {
		fmt.Fprintf(a.stdout, "build: %s\n", strings.Join(b.Settings, " "))
	}
	for _, l := range accelerationReport() {
		if !strings.HasPrefix(l, "cipher code paths:") {
			fmt.Fprintln(a.stdout, l)
		}
	}
	fmt.Fprint(a.stdout, platform.CodePaths())
	return nil
}
