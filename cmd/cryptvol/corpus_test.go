package main

import (
	"bytes"
	"crypto/cipher"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/twofish"
	"golang.org/x/crypto/xts"

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

// TestCLIExportMatchesIndependentXTS exports a volume with the CLI and
// compares the file with x/crypto's XTS decrypting the container with the
// master key that `info --show-key --batch` prints.
func TestCLIExportMatchesIndependentXTS(t *testing.T) {
	var im testdata.TCryptImage
	for _, x := range testdata.TCryptImages(t) {
		if x.Name == "tc_5-sha512-xts-twofish" {
			im = x
		}
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(im.Password), 0o600)
	out := filepath.Join(dir, "plain.img")
	if code, _, errOut := runCLI("export", im.Path, out, "--password-file", pw, "--hash", "sha512"); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	if code, _, _ := runCLI("export", im.Path, out, "--password-file", pw, "--hash", "sha512"); code != exitDestroy {
		t.Fatalf("export over an existing file: exit %d, want %d", code, exitDestroy)
	}
	code, js, errOut := runCLI("info", im.Path, "--password-file", pw, "--hash", "sha512", "--show-key", "--batch", "--json")
	if code != 0 {
		t.Fatalf("info: %d %s", code, errOut)
	}
	var info struct {
		MasterKey  string `json:"master_key"`
		DataOffset int64  `json:"data_offset"`
		DataSize   int64  `json:"data_size"`
	}
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		t.Fatal(err)
	}
	key, err := hex.DecodeString(info.MasterKey)
	if err != nil || len(key) != 64 {
		t.Fatalf("master key %q", info.MasterKey)
	}
	x, err := xts.NewCipher(func(k []byte) (cipher.Block, error) { return twofish.NewCipher(k) }, key)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(im.Path)
	want := make([]byte, info.DataSize)
	for i := int64(0); i < info.DataSize; i += 512 {
		off := info.DataOffset + i
		x.Decrypt(want[i:i+512], raw[off:off+512], uint64(off/512))
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("exported image differs from the independent decryption")
	}
}
