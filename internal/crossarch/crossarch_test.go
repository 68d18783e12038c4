package crossarch

// TestCrossArch builds this package's test binary for a foreign
// architecture and runs it under qemu-user as a helper process. For every
// volume case the helper creates a container (as a big-endian mips64 or a
// 32-bit ARMv6 program would on real hardware) that the host then opens,
// and the host creates one that the helper opens. Each side rebuilds the
// reference image and compares the decrypted data area byte for byte and
// reads the files back through FAT. LUKS containers, whose randomness can
// be seeded, are also compared whole: the two architectures must write
// the same bytes.
//
// It needs the go command and qemu-user-static (qemu-mips64-static,
// qemu-arm-static), and skips with a message naming what is missing.
// It takes about a minute on 2 cores with a warm build cache, so it only
// runs when CRYPTVOL_CROSSARCH=1 is set; .ci/run sets it.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

const (
	enableEnv = "CRYPTVOL_CROSSARCH"
	roleEnv   = "CRYPTVOL_CROSSARCH_ROLE" // create or verify: run as the helper
	caseEnv   = "CRYPTVOL_CROSSARCH_CASE"
	dirEnv    = "CRYPTVOL_CROSSARCH_DIR"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(helper(role, os.Getenv(caseEnv), os.Getenv(dirEnv)))
	}
	os.Exit(m.Run())
}

// helper is the foreign side: it creates or verifies one case in dir and
// reports on stdout/stderr.
func helper(role, name, dir string) int {
	c, ok := findCase(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown case %q\n", name)
		return 2
	}
	var err error
	switch role {
	case "create":
		err = c.create(dir)
	case "verify":
		err = c.verify(dir)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s %s on %s/%s: %v\n", role, name, runtime.GOOS, runtime.GOARCH, err)
		return 1
	}
	fmt.Printf("%s %s on %s/%s: ok\n", role, name, runtime.GOOS, runtime.GOARCH)
	return 0
}

func findCase(name string) (volCase, bool) {
	for _, c := range cases {
		if c.Name == name {
			return c, true
		}
	}
	return volCase{}, false
}

// foreign is an architecture the helper runs as.
type foreign struct {
	name string
	env  []string // for go test -c
	qemu []string
}

var foreigns = []foreign{
	// Big-endian and 64-bit: every on-disk integer and every cipher's
	// word loads are read the other way round from amd64.
	{"linux-mips64", []string{"GOOS=linux", "GOARCH=mips64"}, []string{"qemu-mips64-static"}},
	// 32-bit little-endian, the Raspberry Pi 1 / Zero core.
	{"linux-armv6", []string{"GOOS=linux", "GOARCH=arm", "GOARM=6"}, []string{"qemu-arm-static", "-cpu", "arm1176"}},
}

func TestCrossArch(t *testing.T) {
	if os.Getenv(enableEnv) != "1" {
		t.Skipf("set %s=1 to run (about a minute; .ci/run does)", enableEnv)
	}
	if runtime.GOOS != "linux" {
		t.Skipf("qemu-user runs foreign Linux binaries on Linux hosts only, not on %s", runtime.GOOS)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot build the foreign helper")
	}
	for _, f := range foreigns {
		t.Run(f.name, func(t *testing.T) {
			if _, err := exec.LookPath(f.qemu[0]); err != nil {
				t.Skipf("%s is not installed (apt-get install qemu-user-static)", f.qemu[0])
			}
			bin := filepath.Join(t.TempDir(), "crossarch-"+f.name+".test")
			build := exec.Command(goTool, "test", "-c", "-o", bin, ".")
			build.Env = append(os.Environ(), append([]string{"CGO_ENABLED=0"}, f.env...)...)
			t0 := time.Now()
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("building the %s helper: %v\n%s", f.name, err, out)
			}
			t.Logf("built the %s helper in %.1fs", f.name, time.Since(t0).Seconds())
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) {
					t.Parallel()
					roundTrip(t, f, bin, c)
				})
			}
		})
	}
}

// roundTrip runs one case both ways between the host and f.
func roundTrip(t *testing.T, f foreign, bin string, c volCase) {
	host := runtime.GOOS + "/" + runtime.GOARCH
	fromForeign, fromHost := t.TempDir(), t.TempDir()

	runHelper(t, f, bin, "create", c, fromForeign)
	if err := c.verify(fromForeign); err != nil {
		t.Fatalf("created on %s, opened on %s: %v", f.name, host, err)
	}
	if err := c.create(fromHost); err != nil {
		t.Fatalf("create on %s: %v", host, err)
	}
	runHelper(t, f, bin, "verify", c, fromHost)

	if c.Kind == "luks1" || c.Kind == "luks2" {
		a, err := os.ReadFile(c.path(fromForeign))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(c.path(fromHost))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			t.Fatalf("the same seeded LUKS creation wrote different containers on %s and %s (first difference at byte %d)", f.name, host, i)
		}
	}
}

func runHelper(t *testing.T, f foreign, bin, role string, c volCase, dir string) {
	t.Helper()
	argv := append(append([]string(nil), f.qemu...), bin, "-test.run=^$")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), roleEnv+"="+role, caseEnv+"="+c.Name, dirEnv+"="+dir)
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		what := "created on host, opened on " + f.name
		if role == "create" {
			what = "create on " + f.name
		}
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	t.Logf("%s: %s (%.1fs)", f.name, strings.TrimSpace(string(out)), time.Since(t0).Seconds())
}
