package external

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// newVolume creates a real container of size bytes in a temporary file
// (VeraCrypt, 512-byte sectors; or LUKS2 with 4096-byte sectors) and
// returns its open data area.
func newVolume(t *testing.T, size int64, luks2 bool) *volume.Volume {
	t.Helper()
	path := filepath.Join(t.TempDir(), "v.img")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	dev, err := volume.OpenNewDevice(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	creds := volume.Credentials{Password: []byte("make test"), PIM: 1}
	var u *volume.Unlocked
	if luks2 {
		creds.PIM = 0
		cr, err := luks.Create(context.Background(), dev, luks.CreateOptions{Type: "luks2", SectorSize: 4096, Quick: true,
			KDF: luks.KDFOptions{PBKDF: "pbkdf2", Iterations: 1000}}, creds)
		if err != nil {
			t.Fatal(err)
		}
		u = cr.Unlocked
	} else {
		cr, err := tcrypt.Create(context.Background(), dev, creds, tcrypt.CreateOptions{Quick: true})
		if err != nil {
			t.Fatal(err)
		}
		u = cr.Unlocked
	}
	v, err := volume.New(dev, u, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// TestMake makes every filesystem Make knows in real volumes and checks
// that it is recognised there, that ext4 on 4096-byte sectors gets
// 4096-byte blocks, and what Make said.
func TestMake(t *testing.T) {
	for _, c := range []struct {
		typ, probe string
		size       int64
		luks2      bool
		said       string
	}{
		{"fat", "vfat", 8 << 20, false, ""},
		{"fat32", "vfat", 40 << 20, false, ""},
		{"exfat", "exfat", 2 << 20, false, "exFAT aligned to"}, // too small for mkfs.exfat's 1 MiB alignment
		{"ext4", "ext4", 40 << 20, true, "Making ext4 ..."},
		{"ntfs", "ntfs", 8 << 20, false, "Making ntfs with mkntfs ..."},
	} {
		t.Run(c.typ, func(t *testing.T) {
			if !Makes(c.typ) {
				t.Fatalf("Makes(%q) is false", c.typ)
			}
			if tool := MkfsTool(c.typ); tool != nil {
				if _, err := exec.LookPath(tool.Name); err != nil {
					t.Skipf("%s is not installed", tool.Name)
				}
			}
			v := newVolume(t, c.size, c.luks2)
			var said []string
			err := Make(context.Background(), v, filesystem.FormatOptions{Type: c.typ, Label: "MADE"}, "--filesystem "+c.typ, Env{}, func(s string) { said = append(said, s) })
			if err != nil {
				t.Fatal(err)
			}
			r, err := fsprobe.Probe(v)
			if err != nil || r.Type != c.probe {
				t.Fatalf("probe: %+v, %v; want %s", r, err, c.probe)
			}
			if c.said != "" && (len(said) == 0 || len(said[0]) < len(c.said) || said[0][:len(c.said)] != c.said) {
				t.Errorf("said %q, want %q first", said, c.said)
			}
			fsys, err := filesystem.Open(v, v.Size(), filesystem.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer fsys.Close()
			if c.typ == "ext4" {
				if bs := fsys.Statfs().BlockSize; bs != 4096 {
					t.Errorf("ext4 on 4096-byte sectors has %d-byte blocks", bs)
				}
			}
		})
	}
	if Makes("ext3") || Makes("btrfs") || MkfsTool("fat") != nil || MkfsTool("ntfs") == nil {
		t.Error("Makes or MkfsTool name the wrong filesystems")
	}
}

// TestMakeTooSmall: a volume too small for FAT is an error wrapping
// filesystem.ErrTooSmall, which the command line turns into advice.
func TestMakeTooSmall(t *testing.T) {
	v := newVolume(t, 300<<10, false)
	err := Make(context.Background(), v, filesystem.FormatOptions{Type: "fat32"}, "--filesystem fat", Env{}, func(string) {})
	if !errors.Is(err, filesystem.ErrTooSmall) {
		t.Fatalf("FAT32 in %d bytes: %v", v.Size(), err)
	}
}
