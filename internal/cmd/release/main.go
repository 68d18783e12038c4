// Command release builds the cryptvol release: one static binary per
// platform (CGO_ENABLED=0, -trimpath, stripped, the version linked in) and
// a SHA256SUMS file.
//
// Usage (from anywhere in the module):
//
//	go run ./internal/cmd/release [-out dist] [-version v1.2.3] [-targets linux/armv6,...]
//	                              [-check [-strict]] [-all-packages]
//
// -version defaults to `git describe --tags --always --dirty`; the commit
// (`git rev-parse HEAD`, and whether tracked files are modified) is linked
// in too. `cryptvol version` prints both.
//
// -check inspects every binary (executable format, CPU, byte order, static
// linking, build settings) and runs `cryptvol version`: natively for
// linux/amd64, under qemu-user for the other Linux targets and under Wine
// for windows/amd64 (see wine.go). Darwin and windows/arm64 binaries
// cannot run on a Linux/amd64 host; the output says so and they get the
// inspection only, as does windows/amd64 when Wine is missing, unless
// -strict makes that a failure.
//
// -all-packages also compiles every package of the module, with its tests,
// for every target (`go build ./...` and `go vet ./...`).
//
// -wine-prefix DIR only prepares DIR as a Wine prefix in which Go's
// windows/amd64 programs run (see wine.go), so that
//
//	WINEPREFIX=DIR GOOS=windows go test -exec wine64 ./...
//
// runs test suites as Windows programs.
//
// It exits 1 when a build or check fails, 2 on a usage error.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", "dist", "output directory")
	version := flag.String("version", "", "version linked into the binaries (default: git describe)")
	list := flag.String("targets", "all", "comma-separated targets, e.g. linux/amd64,linux/armv6 (default all)")
	check := flag.Bool("check", false, "inspect each binary and run its `version` command (under qemu or Wine where needed)")
	strict := flag.Bool("strict", false, "with -check: fail, rather than only inspect, when the windows/amd64 binary cannot run under Wine")
	allPkgs := flag.Bool("all-packages", false, "also compile every package and its tests for every target")
	pkg := flag.String("pkg", "./cmd/cryptvol", "the main package to build")
	winePrefix := flag.String("wine-prefix", "", "only set up a Wine prefix in this directory that runs Go's windows/amd64 binaries, then exit (for go test -exec wine64)")
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *winePrefix != "" {
		if err := prepareWinePrefix(*winePrefix); err != nil {
			fmt.Fprintln(os.Stderr, "release:", err)
			os.Exit(1)
		}
		return
	}
	ts, err := selectTargets(*list)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(2)
	}
	if err := toModuleRoot(); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(2)
	}
	if *version == "" {
		*version = defaultVersion()
	}
	if strings.ContainsAny(*version, " \t\n'\"") {
		fmt.Fprintf(os.Stderr, "release: version %q must not contain spaces or quotes\n", *version)
		os.Exit(2)
	}
	st := gitStamp()
	st.Version = *version
	if err := release(ts, *out, *pkg, st, *check, *strict, *allPkgs); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// toModuleRoot changes to the directory of the main module's go.mod, so
// ./... and ./cmd/cryptvol mean the same wherever this was started.
func toModuleRoot() error {
	b, err := exec.Command(goTool(), "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(b))
	if mod == "" || mod == os.DevNull {
		return fmt.Errorf("not inside the cryptvol module")
	}
	return os.Chdir(filepath.Dir(mod))
}

func release(ts []target, out, pkg string, st stamp, check, strict, allPkgs bool) error {
	start := time.Now()
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// Stale binaries of an earlier run would sit beside a SHA256SUMS that
	// does not list them.
	old, _ := filepath.Glob(filepath.Join(out, "cryptvol-*"))
	for _, p := range append(old, filepath.Join(out, checksumFile)) {
		os.Remove(p)
	}
	commit := st.Commit
	if commit == "" {
		commit = "unknown (no git)"
	} else if st.Modified {
		commit += " (modified)"
	}
	fmt.Printf("cryptvol %s, commit %s: building %d targets into %s\n", st.Version, commit, len(ts), out)
	var names []string
	for _, t := range ts {
		t0 := time.Now()
		p := filepath.Join(out, t.FileName())
		if err := buildBinary(t, pkg, p, st); err != nil {
			return err
		}
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		fmt.Printf("  %-16s %-30s %6.1f MB  %5.1fs\n", t.Name(), p, float64(fi.Size())/1e6, time.Since(t0).Seconds())
		names = append(names, t.FileName())
	}
	if err := writeChecksums(out, names); err != nil {
		return err
	}
	fmt.Printf("wrote %s (%d files) in %.1fs\n", filepath.Join(out, checksumFile), len(names), time.Since(start).Seconds())

	if allPkgs {
		t0 := time.Now()
		fmt.Println("compiling every package with its tests (go build ./... && go vet ./...):")
		for _, t := range ts {
			t1 := time.Now()
			if err := buildAllPackages(t); err != nil {
				return err
			}
			fmt.Printf("  %-16s ok  %5.1fs\n", t.Name(), time.Since(t1).Seconds())
		}
		fmt.Printf("all packages build for %d targets in %.1fs\n", len(ts), time.Since(t0).Seconds())
	}

	if check {
		t0 := time.Now()
		if err := checkAll(ts, out, st, strict); err != nil {
			return err
		}
		fmt.Printf("checks done in %.1fs\n", time.Since(t0).Seconds())
	}
	return nil
}

// checkAll inspects and, where this host can, runs every binary. Every
// binary is checked before the first failure is returned.
func checkAll(ts []target, out string, st stamp, strict bool) error {
	defer cleanUpWine()
	fmt.Println("checking binaries:")
	var failed []string
	notRun := 0
	for _, t := range ts {
		p := filepath.Join(out, t.FileName())
		if err := inspectBinary(t, p, st.Version); err != nil {
			fmt.Printf("  %-16s FAIL  %v\n", t.Name(), err)
			failed = append(failed, t.Name())
			continue
		}
		ex, why := runner(t)
		if why != "" {
			if t.GOOS == "linux" || (strict && t.GOOS == "windows" && t.GOARCH == "amd64") {
				// A Linux binary this Linux host should run: the
				// check was asked for and cannot be done.
				fmt.Printf("  %-16s FAIL  not run: %s\n", t.Name(), why)
				failed = append(failed, t.Name())
				continue
			}
			fmt.Printf("  %-16s NOT RUN  %s; format, CPU and build settings verified only\n", t.Name(), why)
			notRun++
			continue
		}
		how := ex.String()
		t0 := time.Now()
		output, err := runVersion(t, ex, p, st)
		if err != nil {
			fmt.Printf("  %-16s FAIL  `version` %s: %v\n%s", t.Name(), how, err, indent(output))
			failed = append(failed, t.Name())
			continue
		}
		fmt.Printf("  %-16s ok  `version` ran %s (%.1fs):\n%s", t.Name(), how, time.Since(t0).Seconds(), indent(output))
	}
	if notRun > 0 {
		fmt.Printf("%d binaries could not be run on this host (see NOT RUN above)\n", notRun)
	}
	if len(failed) > 0 {
		return fmt.Errorf("check failed for %s", strings.Join(failed, ", "))
	}
	return nil
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("      | " + l + "\n")
	}
	return b.String()
}
