package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
)

// TestCLILsEveryImage lists the root directory of every normal volume of
// the TrueCrypt/VeraCrypt corpus and every LUKS1 image. The corpus makers
// wiped blocks of these images: a listing either works or fails with a
// clear "damaged" error (exit 3), never a crash or another code.
func TestCLILsEveryImage(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	listed, damaged := 0, 0
	check := func(t *testing.T, args ...string) {
		t.Helper()
		code, out, errOut := runCLI(append([]string{"ls"}, args...)...)
		switch {
		case code == 0:
			listed++
			t.Logf("root: %q", strings.Fields(out))
		case code == exitDamaged && strings.Contains(errOut, "cryptvol ls: "):
			damaged++
			t.Logf("damaged: %s", strings.TrimSpace(errOut))
		default:
			t.Fatalf("exit %d: %s", code, errOut)
		}
	}
	for _, im := range testdata.TCryptImages(t) {
		if im.Slow() && testing.Short() {
			continue
		}
		t.Run(im.Name, func(t *testing.T) {
			os.WriteFile(pw, []byte(im.Password+"\n"), 0o600)
			args := []string{im.Path, "--password-file", pw, "--hash", im.Hash}
			if im.System {
				args = append(args, "--system")
			}
			if im.PIM != 0 {
				args = append(args, "--pim", strconv.Itoa(im.PIM))
			}
			for _, k := range im.Keyfiles {
				args = append(args, "--keyfile", k)
			}
			check(t, args...)
		})
	}
	ldir := filepath.Join(testdata.Unpack(t, "luks1-images.tar.xz"))
	var images []string
	filepath.Walk(ldir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && strings.HasSuffix(fi.Name(), ".img") {
			images = append(images, p)
		}
		return nil
	})
	key := ""
	filepath.Walk(ldir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Name() == "keyfile1" {
			key = p
		}
		return nil
	})
	if len(images) != 12 || key == "" {
		t.Fatalf("LUKS1 corpus: %d images, keyfile %q", len(images), key)
	}
	for _, img := range images {
		t.Run(filepath.Base(img), func(t *testing.T) {
			check(t, img, "--keyfile", key, "--non-interactive")
		})
	}
	t.Logf("%d roots listed, %d refused as damaged", listed, damaged)
}
