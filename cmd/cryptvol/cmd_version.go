package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/ciphers/chacha20"
	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/kdf"
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
	rev, dirty := commit, modified == "true"
	var build []string // the settings that choose code paths
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					rev = s.Value
				}
			case "vcs.modified":
				if commit == "" {
					dirty = s.Value == "true"
				}
			case "GOARM", "GOAMD64", "GOARM64", "GOMIPS64", "GORISCV64", "CGO_ENABLED", "-tags":
				build = append(build, s.Key+"="+s.Value)
			}
		}
	}
	if rev == "" {
		rev = "unknown"
	}
	if dirty {
		rev += " (modified)"
	}
	fmt.Fprintf(a.stdout, "cryptvol %s\ncommit %s\n%s %s/%s\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if len(build) > 0 {
		fmt.Fprintf(a.stdout, "build: %s\n", strings.Join(build, " "))
	}
	for _, l := range accelerationReport() {
		if !strings.HasPrefix(l, "cipher code paths:") {
			fmt.Fprintln(a.stdout, l)
		}
	}
	fmt.Fprint(a.stdout, codePaths())
	return nil
}

// codePaths lists the code path of each cipher on this CPU, one per line;
// the legacy ciphers, which share one description, are grouped.
func codePaths() string {
	var b strings.Builder
	b.WriteString("cipher code paths:\n")
	var legacy []string
	legacyImpl := map[string][]string{}
	for _, s := range ciphers.All() {
		if s.Legacy {
			if _, ok := legacyImpl[s.Implementation()]; !ok {
				legacy = append(legacy, s.Implementation())
			}
			legacyImpl[s.Implementation()] = append(legacyImpl[s.Implementation()], s.Name)
			continue
		}
		fmt.Fprintf(&b, "  %-11s %s\n", s.Name, s.Implementation())
	}
	for _, impl := range legacy {
		fmt.Fprintf(&b, "  legacy (%s): %s\n", strings.Join(legacyImpl[impl], ", "), impl)
	}
	// Not a volume cipher: `cryptvol enc -chacha20` uses it.
	fmt.Fprintf(&b, "  %-11s %s (enc)\n", "ChaCha20", chacha20.Implementation())
	// The PRFs whose PBKDF2 chains run in SIMD lanes.
	b.WriteString("kdf code paths:\n")
	for _, h := range []string{hashes.SHA512, hashes.SHA256, hashes.BLAKE2s256, hashes.RIPEMD160} {
		fmt.Fprintf(&b, "  PBKDF2-%-11s %s\n", h, kdf.PBKDF2Path(h))
	}
	return b.String()
}
