package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/ciphers/adiantum"
	"github.com/cryptvol/cryptvol/ciphers/chacha20"
	"github.com/cryptvol/cryptvol/internal/platform"
	"github.com/cryptvol/cryptvol/internal/selftest"
)

func init() {
	register(&command{
		name:    "selftest",
		summary: "check every algorithm against published test vectors (PASS/FAIL)",
		usage: `Usage: cryptvol selftest

Runs the known-answer vectors built into cryptvol (FIPS-197, NESSIE, the
Twofish paper, RFC 3713, RFC 7801, IEEE 1619, the Linux kernel's ESSIV, LRW,
XChaCha and Adiantum vectors, VeraCrypt's own XTS cascade tests, FIPS 180-4, RFC 6070/7914 and
VeraCrypt's PBKDF2 tests, RFC 9106, RFC 8439, ...) through the code paths this CPU
uses, and prints one PASS or FAIL line per algorithm. It takes well under a
second.

Exit status: 0 if every algorithm passes, 3 if any fails (this build or CPU
computes something other than the standard: trust no volume to it).

Example:
  cryptvol selftest
`,
		run: runSelftest,
	})
}

func runSelftest(ctx context.Context, a *app, args []string) error {
	c := commands["selftest"]
	fs := newFlags(c, a)
	if err := parseFlags(fs, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fs, 0, 0); err != nil {
		return err
	}
	printSelftestHeader(a.stdout)
	start := time.Now()
	results := selftest.Run(ctx)
	failed := 0
	for _, r := range results {
		if r.Passed() {
			fmt.Fprintf(a.stdout, "PASS  %s (%s)\n", r.Name, r.Source)
		} else {
			failed++
			fmt.Fprintf(a.stdout, "FAIL  %s (%s): %v\n", r.Name, r.Source, r.Err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if failed > 0 {
		return withCode(exitDamaged, fmt.Errorf("%d of %d algorithms FAILED their known-answer tests", failed, len(results)))
	}
	fmt.Fprintf(a.stdout, "All %d algorithms passed (%.0f ms).\n", len(results), float64(time.Since(start).Microseconds())/1000)
	return nil
}

// printSelftestHeader names the machine and the code path each cipher
// takes on it: the vectors test those paths.
func printSelftestHeader(w io.Writer) {
	p := platform.Detect()
	fmt.Fprintf(w, "CPU: %s (%d cores), %s/%s; features: %s\n", p.CPU, p.Cores, p.GOOS, p.GOARCH, strings.Join(p.Flags, " "))
	var paths []string
	legacy := ""
	for _, s := range ciphers.All() {
		if s.Legacy {
			legacy = s.Implementation()
			continue
		}
		paths = append(paths, s.Name+"="+s.Implementation())
	}
	paths = append(paths, "XChaCha="+chacha20.XImplementation(), "NH="+adiantum.NHImplementation())
	fmt.Fprintf(w, "Code paths: %s\n", strings.Join(paths, "; "))
	if legacy != "" {
		fmt.Fprintf(w, "Legacy ciphers: %s\n", legacy)
	}
}
