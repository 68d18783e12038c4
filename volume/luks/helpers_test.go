package luks

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
)

// cryptsetup runs the cryptsetup CLI (the oracle) with stdin and returns
// its combined output and whether it succeeded. Tests that need it skip
// with a clear message where it is not installed (CI installs it).
func cryptsetup(t testing.TB, stdin string, args ...string) (string, bool) {
	t.Helper()
	path, err := exec.LookPath("cryptsetup")
	if err != nil {
		t.Skip("cryptsetup is not installed: the differential checks need it (apt-get install cryptsetup-bin)")
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

func mustCryptsetup(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	out, ok := cryptsetup(t, stdin, args...)
	if !ok {
		t.Fatalf("cryptsetup %s failed:\n%s", strings.Join(args, " "), out)
	}
	return out
}

// dumpVolumeKey asks cryptsetup for the volume key the passphrase unlocks.
func dumpVolumeKey(t testing.TB, pass string, args ...string) []byte {
	t.Helper()
	out := mustCryptsetup(t, pass, append([]string{"luksDump", "--dump-volume-key", "--batch-mode", "--key-file", "-"}, args...)...)
	var hexDigits strings.Builder
	in := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "MK dump:"):
			in = true
			line = strings.TrimPrefix(line, "MK dump:")
		case in && (strings.HasPrefix(line, "\t") || strings.HasPrefix(line, " ")):
		default:
			in = false
			continue
		}
		hexDigits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	key, err := hex.DecodeString(hexDigits.String())
	if err != nil || len(key) == 0 {
		t.Fatalf("cannot parse the volume key from:\n%s", out)
	}
	return key
}

// dumpField returns the value of "Name: value" in cryptsetup's luksDump.
func dumpField(out, name string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// rawDevice is a container file opened without the volume lock, as a
// program that takes none would open it: these tests reopen the file by
// path, and run cryptsetup on it (which waits for a flock), while they
// hold it.
type rawDevice struct {
	*os.File
	size int64
}

func (d *rawDevice) Size() int64 { return d.size }

// openRaw opens path as a rawDevice, closed when the test ends.
func openRaw(t testing.TB, path string, readOnly bool) *rawDevice {
	t.Helper()
	flag := os.O_RDWR
	if readOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	size, err := f.Seek(0, 2)
	if err != nil {
		t.Fatal(err)
	}
	return &rawDevice{File: f, size: size}
}

// newImage makes a sparse file of size bytes and opens it as a Device.
func newImage(t testing.TB, size int64) (string, *rawDevice) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vol.img")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	return p, openRaw(t, p, false)
}

// fastKDF are the cheap parameters cryptsetup's own test suite uses.
func fastKDF(pbkdf string) KDFOptions {
	if pbkdf == "pbkdf2" {
		return KDFOptions{PBKDF: "pbkdf2", Iterations: 1000}
	}
	return KDFOptions{PBKDF: pbkdf, Iterations: 4, MemoryKiB: 1024, Parallel: 1}
}

func pw(s string) volume.Credentials { return volume.Credentials{Password: []byte(s)} }

// openPath unlocks the volume at path (read-write unless readOnly).
func openPath(t testing.TB, path string, c volume.Credentials, o volume.Options) (*volume.Volume, error) {
	t.Helper()
	o.Warn = func(m string) { t.Log("warning:", m) }
	return volume.OpenWith(context.Background(), path, c, o)
}

// masterKeyOf opens the volume and returns its volume key.
func masterKeyOf(t testing.TB, path string, c volume.Credentials, o volume.Options) []byte {
	t.Helper()
	o.ReadOnly = true
	v, err := openPath(t, path, c, o)
	if err != nil {
		t.Fatalf("opening %s: %v", filepath.Base(path), err)
	}
	defer v.Close()
	return v.MasterKey()
}

func sameKey(t testing.TB, ours, theirs []byte) {
	t.Helper()
	if !bytes.Equal(ours, theirs) {
		t.Fatalf("volume key differs:\n ours       %x\n cryptsetup %x", ours, theirs)
	}
}
