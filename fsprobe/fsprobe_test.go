package fsprobe

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
)

func probeFile(t *testing.T, path string) *Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Probe(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// blkid is the oracle: what it prints for the image is what we must say.
func blkid(t *testing.T, path, tag string) string {
	out, err := exec.Command("blkid", "-p", "-o", "value", "-s", tag, path).Output()
	if err != nil {
		t.Skipf("blkid unavailable or failed: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestCorpusVFAT(t *testing.T) {
	p := testdata.Unpack(t, "img_fs_vfat.img.xz")
	r := probeFile(t, p)
	if r.Type != "vfat" {
		t.Fatalf("type %q", r.Type)
	}
	if want := blkid(t, p, "UUID"); r.Serial != want {
		t.Errorf("serial %q, blkid says %q", r.Serial, want)
	}
}

func TestCorpusExt4(t *testing.T) {
	p := testdata.Unpack(t, "img_fs_ext4.img.xz")
	r := probeFile(t, p)
	if want := blkid(t, p, "TYPE"); r.Type != want {
		t.Errorf("type %q, blkid says %q", r.Type, want)
	}
	if want := blkid(t, p, "UUID"); r.UUID != want {
		t.Errorf("uuid %q, blkid says %q", r.UUID, want)
	}
}

// TestMkfsFAT formats images with mkfs.fat at sizes that give each FAT type
// and checks type, serial and label.
func TestMkfsFAT(t *testing.T) {
	if _, err := exec.LookPath("mkfs.fat"); err != nil {
		t.Skip("mkfs.fat (dosfstools) not installed")
	}
	for _, tc := range []struct {
		size    int64
		args    []string
		version string
	}{
		{1 << 20, []string{"-F", "12"}, "FAT12"},
		{20 << 20, []string{"-F", "16"}, "FAT16"},
		{40 << 20, []string{"-F", "32"}, "FAT32"},
	} {
		p := filepath.Join(t.TempDir(), "fs.img")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, tc.size); err != nil {
			t.Fatal(err)
		}
		args := append(tc.args, "-i", "CAFEBABE", "-n", "MYLABEL", p)
		if out, err := exec.Command("mkfs.fat", args...).CombinedOutput(); err != nil {
			t.Fatalf("mkfs.fat: %v\n%s", err, out)
		}
		r := probeFile(t, p)
		if r.Type != "vfat" || r.Version != tc.version || r.Serial != "CAFE-BABE" || r.Label != "MYLABEL" {
			t.Errorf("%s: got %+v", tc.version, r)
		}
	}
}

func TestGarbage(t *testing.T) {
	z := make([]byte, 4096)
	if _, err := Probe(strings.NewReader(string(z))); err != ErrUnknown {
		t.Fatalf("zeros: %v", err)
	}
	if _, err := Probe(strings.NewReader("short")); err == nil {
		t.Fatal("short input accepted")
	}
}

// TestBitLockerContainers: the raw BitLocker corpus images are named as
// blkid names them, not as the FAT or NTFS their boot sectors imitate.
func TestBitLockerContainers(t *testing.T) {
	imgs := testdata.BitLockerImages(t)
	for _, im := range imgs {
		r := probeFile(t, im.Path)
		if r.Type != "BitLocker" || r.Version != "2" {
			t.Errorf("%s: %+v", im.Name, r)
		}
	}
	if want := blkid(t, imgs[0].Path, "TYPE"); want != "BitLocker" {
		t.Errorf("blkid says %q", want)
	}
}

// TestHFSPlusUUID builds HFS+ volume headers with random identifiers and
// checks the type and UUID against blkid's.
func TestHFSPlusUUID(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 8; i++ {
		img := make([]byte, 8192)
		copy(img[1024:], "H+\x00\x04")
		img[1024+41] = 0x10 // 4096-byte blocks
		img[1024+47] = 2    // two of them
		rand.Read(img[1024+104 : 1024+112])
		p := filepath.Join(dir, "hfs.img")
		if err := os.WriteFile(p, img, 0o644); err != nil {
			t.Fatal(err)
		}
		r := probeFile(t, p)
		if r.Type != "hfsplus" {
			t.Fatalf("type %q", r.Type)
		}
		if want := blkid(t, p, "UUID"); r.UUID != want {
			t.Errorf("uuid %q, blkid says %q", r.UUID, want)
		}
	}
}

// TestSize checks the size a filesystem declares against the size its
// maker was told: each is made smaller than its image file.
func TestSize(t *testing.T) {
	for _, tc := range []struct {
		tool string
		args func(p string) []string
		want int64
	}{
		{"mkfs.fat", func(p string) []string { return []string{"-F", "16", p, "20480"} }, 20480 << 10},
		{"mkfs.fat", func(p string) []string { return []string{"-F", "32", "-S", "512", p, "40960"} }, 40960 << 10},
		{"mkfs.ext4", func(p string) []string { return []string{"-q", "-F", "-b", "4096", p, "5M"} }, 5 << 20},
		{"mkntfs", func(p string) []string { return []string{"-q", "-F", "-Q", "-s", "512", p, "12288"} }, 12288 * 512},
		{"mkfs.exfat", func(p string) []string { return []string{p} }, 48 << 20},
	} {
		if _, err := exec.LookPath(tc.tool); err != nil {
			t.Logf("NOT CHECKED: %s is not installed", tc.tool)
			continue
		}
		p := filepath.Join(t.TempDir(), "fs.img")
		os.WriteFile(p, nil, 0o644)
		os.Truncate(p, 48<<20)
		if out, err := exec.Command(tc.tool, tc.args(p)...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", tc.tool, err, out)
		}
		if r := probeFile(t, p); r.Size != tc.want {
			t.Errorf("%s: size %d, want %d (%+v)", tc.tool, r.Size, tc.want, r)
		}
	}
}
