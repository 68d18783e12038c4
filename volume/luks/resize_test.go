package luks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
)

// TestSetDataSize: a LUKS2 volume made by cryptsetup luksFormat has a
// dynamic segment, which SetDataSize leaves as it is (luksDump: "whole
// device"); one whose segment has a fixed size gets the new size, which
// luksDump shows, and cryptsetup still accepts the passphrase (the
// header copies and their checksums are valid).
func TestSetDataSize(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "v.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Truncate(img, 32<<20)
	const pass = "resize me"
	mustCryptsetup(t, pass, "luksFormat", "--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "-q", "--key-file", "-", img)
	open := func() *volume.FileDevice {
		dev, err := volume.OpenDevice(img, false)
		if err != nil {
			t.Fatal(err)
		}
		return dev
	}
	dev := open()
	off, fixed, err := DataLayout(dev)
	if err != nil || fixed != 0 {
		t.Fatalf("DataLayout of cryptsetup's volume: offset %d, size %d, %v; want a dynamic segment", off, fixed, err)
	}
	if err := SetDataSize(dev, 8<<20); err != nil {
		t.Fatal(err)
	}
	dev.Close()
	if out := mustCryptsetup(t, "", "luksDump", img); !strings.Contains(out, "(whole device)") {
		t.Fatalf("a dynamic segment did not stay dynamic:\n%s", out)
	}
	dev = open()
	if err := setSegmentSize(dev, 12<<20, true); err != nil {
		t.Fatal(err)
	}
	if err := SetDataSize(dev, 9<<20); err != nil {
		t.Fatal(err)
	}
	if _, fixed, err = DataLayout(dev); err != nil || fixed != 9<<20 {
		t.Fatalf("DataLayout after SetDataSize: %d, %v; want %d", fixed, err, 9<<20)
	}
	dev.Close()
	if out := mustCryptsetup(t, "", "luksDump", img); !strings.Contains(out, "length: 9437184 [bytes]") {
		t.Fatalf("luksDump does not show the new segment size:\n%s", out)
	}
	mustCryptsetup(t, pass, "open", "--test-passphrase", "--key-file", "-", img)
}
