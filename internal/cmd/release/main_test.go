package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestChecksumsVerify writes SHA256SUMS for two files and has coreutils'
// sha256sum check it, so the file is in the format users will run.
func TestChecksumsVerify(t *testing.T) {
	sha256sum, err := exec.LookPath("sha256sum")
	if err != nil {
		t.Skip("sha256sum (coreutils) not installed")
	}
	dir := t.TempDir()
	files := map[string]string{"cryptvol-linux-amd64": "one binary", "cryptvol-windows-arm64.exe": strings.Repeat("x", 100000)}
	var names []string
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := writeChecksums(dir, names); err != nil {
		t.Fatal(err)
	}
	check := func() ([]byte, error) {
		cmd := exec.Command(sha256sum, "-c", checksumFile)
		cmd.Dir = dir
		return cmd.CombinedOutput()
	}
	if out, err := check(); err != nil {
		t.Fatalf("sha256sum -c rejects our SHA256SUMS: %v\n%s", err, out)
	}
	// And it catches a changed binary, so the list really covers them.
	if err := os.WriteFile(filepath.Join(dir, "cryptvol-linux-amd64"), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := check(); err == nil {
		t.Fatalf("sha256sum -c accepted a changed file:\n%s", out)
	}
}

func TestSelectTargets(t *testing.T) {
	all, err := selectTargets("")
	if err != nil || len(all) != len(targets) {
		t.Fatalf("all targets: %d, %v", len(all), err)
	}
	seen := map[string]bool{}
	for _, tg := range all {
		if seen[tg.FileName()] {
			t.Fatalf("two targets write %s", tg.FileName())
		}
		seen[tg.FileName()] = true
	}
	ts, err := selectTargets("linux/armv6, windows/arm64")
	if err != nil || len(ts) != 2 || ts[0].GOARM != "6" || ts[1].FileName() != "cryptvol-windows-arm64.exe" {
		t.Fatalf("got %+v, %v", ts, err)
	}
	if _, err := selectTargets("linux/arm"); err == nil {
		t.Fatal("an ARM target without a version was accepted")
	}
}

// TestInspectRejects runs the binary inspection on this test binary, which
// is an ELF for the host but not a release build.
func TestInspectRejects(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the test binary is an ELF file only on Linux")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	host := target{GOOS: "linux", GOARCH: runtime.GOARCH}
	// (A race-enabled test binary is dynamically linked: that is the only
	// complaint allowed.)
	if err := checkExecutableFormat(host, self); err != nil && !strings.Contains(err.Error(), "dynamically linked") {
		t.Fatalf("the host's own binary fails the format check: %v", err)
	}
	other := target{GOOS: "linux", GOARCH: "mips64"}
	if runtime.GOARCH == "mips64" {
		other.GOARCH = "amd64"
	}
	if err := checkExecutableFormat(other, self); err == nil {
		t.Fatalf("a %s binary passed as %s", runtime.GOARCH, other.Name())
	}
	for _, tg := range []target{{GOOS: "darwin", GOARCH: "arm64"}, {GOOS: "windows", GOARCH: "amd64"}} {
		if err := checkExecutableFormat(tg, self); err == nil {
			t.Fatalf("an ELF file passed as %s", tg.Name())
		}
	}
	// A test binary is built without -trimpath.
	if err := inspectBinary(host, self, "v0"); err == nil {
		t.Fatalf("inspecting a non-release build: %v", err)
	}
}

// TestBuildAndRun builds a stand-in for cryptvol (testdata/fakecryptvol:
// it prints the same first lines) with the release flags for the host and
// for big-endian mips64, inspects both and runs their `version`, the
// mips64 one under qemu. It shows the flags link the version and commit
// in and give a static binary of the right kind.
func TestBuildAndRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	st := stamp{Version: "v9.8.7-test", Commit: "0123456789abcdef0123456789abcdef01234567", Modified: true}
	dir := t.TempDir()
	ts := []target{{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}}
	if runtime.GOOS == "linux" && runtime.GOARCH != "mips64" {
		mips, err := selectTargets("linux/mips64")
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, mips...)
	}
	for _, tg := range ts {
		t.Run(tg.Name(), func(t *testing.T) {
			p := filepath.Join(dir, tg.FileName())
			if err := buildBinary(tg, "./testdata/fakecryptvol", p, st); err != nil {
				t.Fatal(err)
			}
			if err := inspectBinary(tg, p, st.Version); err != nil {
				t.Fatalf("inspect: %v", err)
			}
			ex, why := runner(tg)
			if why != "" {
				t.Skipf("built and inspected, not run: %s", why)
			}
			out, err := runVersion(tg, ex, p, st)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(out, "commit "+st.Commit+" (modified)\n") {
				t.Fatalf("version output lacks the modified mark:\n%s", out)
			}
		})
	}
}

// TestDeleteOverlay checks that the Wine delete overlay still applies to
// this Go's standard library and that the standard library builds for
// windows/amd64 with it.
func TestDeleteOverlay(t *testing.T) {
	dir := t.TempDir()
	overlay, err := writeDeleteOverlay(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "at_windows.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), deleteAnchor+deletePatch) {
		t.Fatal("the patched file lacks the Wine fallback")
	}
	if testing.Short() {
		return
	}
	cmd := exec.Command(goTool(), "build", "-overlay", overlay, "os")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("package os does not build for windows/amd64 with the overlay: %v\n%s", err, out)
	}
}
