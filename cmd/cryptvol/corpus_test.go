package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
)

// runCLI runs the command in-process and returns its exit code and output.
func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb})
	return code, out.String(), errb.String()
}

// TestCLIInfoEveryImage runs `cryptvol info --json` on every image of the
// TrueCrypt/VeraCrypt corpus (and --hidden on the hidden ones) and checks
// the FAT serial, then a wrong password on each kind of image exits 2.
func TestCLIInfoEveryImage(t *testing.T) {
	dir := t.TempDir()
	pwFile := func(name, pw string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(pw+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wrong := pwFile("wrong", "definitely not it")
	for _, im := range testdata.TCryptImages(t) {
		im := im
		if im.Slow() && testing.Short() {
			continue
		}
		t.Run(im.Name, func(t *testing.T) {
			args := []string{"info", im.Path, "--json", "--hash", im.Hash}
			if im.System {
				args = append(args, "--system")
			}
			if im.PIM != 0 {
				args = append(args, "--pim", strconv.Itoa(im.PIM))
			}
			for _, k := range im.Keyfiles {
				args = append(args, "--keyfile", k)
			}
			check := func(args []string, pw, serial string) {
				t.Helper()
				code, out, errOut := runCLI(append(args, "--password-file", pwFile(im.Name+serial, pw))...)
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errOut)
				}
				var info struct {
					DataOffset int64 `json:"data_offset"`
					Filesystem *struct {
						Serial string `json:"serial"`
					} `json:"filesystem"`
				}
				if err := json.Unmarshal([]byte(out), &info); err != nil {
					t.Fatalf("output is not JSON: %v\n%s", err, out)
				}
				if testdata.RawZeroAt(t, im.Path, info.DataOffset) {
					t.Logf("data area wiped in the corpus: serial not checkable")
					return
				}
				if info.Filesystem == nil || info.Filesystem.Serial != serial {
					t.Fatalf("want serial %s in:\n%s", serial, out)
				}
			}
			check(args, im.Password, "DEAD-BABE")
			if im.Hidden {
				check(append(args, "--hidden"), testdata.TCryptHiddenPassword, "CAFE-BABE")
			}
			if strings.HasPrefix(im.Name, "tc_5-sha512-xts-aes") || im.Name == "vc_1-sha512-xts-aes" || im.System {
				code, _, errOut := runCLI(append(args, "--password-file", wrong)...)
				if code != 2 || !strings.Contains(errOut, "wrong password") {
					t.Fatalf("wrong password: exit %d, %q", code, errOut)
				}
			}
		})
	}
}
