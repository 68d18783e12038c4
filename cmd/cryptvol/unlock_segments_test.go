package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/keep"
	"github.com/cryptvol/cryptvol/internal/testdata"
)

// TestUnlockBitLockerAndFileVault keeps a BitLocker volume made by
// Windows (its data area in segments: relocated first sectors, metadata
// blocks as zeros) and the FileVault 2 volume made by macOS unlocked in
// the kernel keyring, then exports each without credentials: the
// decrypted volume's sha256 is the one images.conf and the corpus README
// give. Before, `unlock` refused them ("this kind of volume cannot be kept
// unlocked"), and writes into NTFS on BitLocker ran the raw-file server
// and the ntfs-3g client in one process.
func TestUnlockBitLockerAndFileVault(t *testing.T) {
	if _, err := keep.Open(keep.Options{}); err != nil {
		t.Skipf("no kernel keyring here: %v", err)
	}
	t.Setenv("CRYPTVOL_UNLOCK_STORE", "keyring")
	t.Setenv("CRYPTVOL_KEYRING", "cryptvol-test-segments")
	t.Cleanup(func() { keep.RemoveKeyring("cryptvol-test-segments") })
	var bitlk testdata.BitLockerImage
	for _, im := range testdata.BitLockerImages(t) {
		if im.Name == "bitlk-aes-xts-128" {
			bitlk = im
		}
	}
	fv := filepath.Join(testdata.Unpack(t, "fvault2-images.tar.xz"), "fvault2-images", "small")
	cases := []struct{ name, path, password, sha256 string }{
		{"bitlk", bitlk.Path, bitlk.Password, bitlk.SHA256},
		// ../shared/testdata/README.md: the logical volume of "small".
		{"fvault2", fv, "heslo123", "2c662e36c0f7e2f5583e6a939bbcbdc660805692d0fccaa45ad4052beb3b8e18"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			vol := testdata.CopyFile(t, c.path)
			pw := filepath.Join(dir, "pw")
			os.WriteFile(pw, []byte(c.password), 0o600)
			cli(t, "unlock", vol, "--password-file", pw)
			defer cli(t, "lock", vol)
			if out := cli(t, "list", "--unlocked"); !strings.Contains(out, vol) {
				t.Fatalf("not listed as unlocked:\n%s", out)
			}
			raw := filepath.Join(dir, "raw")
			cli(t, "export", vol, raw) // no credentials: the kept unlock
			f, err := os.Open(raw)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			io.Copy(h, f)
			f.Close()
			if got := hex.EncodeToString(h.Sum(nil)); got != c.sha256 {
				t.Fatalf("exported from the kept unlock: sha256 %s, want %s", got, c.sha256)
			}
		})
	}
}
