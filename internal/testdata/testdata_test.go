package testdata

import (
	"os"
	"path/filepath"
	"testing"
)

func TestUnpackTarAndFile(t *testing.T) {
	d := Unpack(t, "tcrypt-images.tar.xz")
	if _, err := os.Stat(filepath.Join(d, "tcrypt-images", "keyfile1")); err != nil {
		t.Fatalf("keyfile1 not unpacked: %v", err)
	}
	f := Unpack(t, "img_fs_vfat.img.xz")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 512 || b[510] != 0x55 || b[511] != 0xAA {
		t.Fatalf("vfat image has no boot signature (len %d)", len(b))
	}
}
