package oracle_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/oracle"
	"github.com/cryptvol/cryptvol/internal/testdata"
)

// TestMountCorpusImage mounts a corpus image made by VeraCrypt itself and
// checks the FAT serial of what the oracle decrypted, and that a wrong
// password is refused.
func TestMountCorpusImage(t *testing.T) {
	vc := testdata.VeraCrypt(t, oracle.VeraCrypt12624)
	var img testdata.TCryptImage
	for _, im := range testdata.TCryptImages(t) {
		if im.Name == "vc_1-sha512-xts-aes" {
			img = im
		}
	}
	if img.Path == "" {
		t.Fatal("vc_1-sha512-xts-aes not in the corpus")
	}
	vol := testdata.CopyFile(t, img.Path)
	ctx := context.Background()
	m, err := vc.Mount(ctx, vol, oracle.MountOptions{Password: img.Password, Hash: "sha512", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Dismount()
	p, err := m.Properties(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p["Encryption Algorithm"] != "AES" || p["PKCS-5 PRF"] != "HMAC-SHA-512" {
		t.Errorf("properties: %q %q", p["Encryption Algorithm"], p["PKCS-5 PRF"])
	}
	boot := make([]byte, 512)
	f, err := os.Open(m.Dev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(boot, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// FAT12/16 keep the serial at 39, FAT32 at 67; the corpus serial is DEAD-BABE.
	if !strings.Contains(string(boot), "\xbe\xba\xad\xde") {
		t.Errorf("decrypted boot sector has no DEAD-BABE serial")
	}
	if err := m.Dismount(); err != nil {
		t.Fatal(err)
	}
	_, err = vc.Mount(ctx, vol, oracle.MountOptions{Password: "wrong", Hash: "sha512"})
	if !errors.Is(err, oracle.ErrRefused) {
		t.Fatalf("wrong password: %v", err)
	}
}
