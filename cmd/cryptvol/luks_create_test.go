package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/volume"
)

// TestLUKSCreateFlags: luksFormat's spellings map onto luks.CreateOptions,
// flags the create command already has are not registered twice, and the
// result is a volume whose data area takes a filesystem.
func TestLUKSCreateFlags(t *testing.T) {
	fs := pflag.NewFlagSet("create", pflag.ContinueOnError)
	fs.String("hash", "", "")  // defined by the create command
	fs.String("label", "", "") // defined by the create command
	f := addLUKSCreateFlags(fs)
	if fs.Lookup("label").Usage != "" {
		t.Fatal("--label was redefined")
	}
	err := fs.Parse([]string{"--cipher", "twofish-xts-plain64", "-s", "256", "--pbkdf", "pbkdf2",
		"--pbkdf-force-iterations", "1000", "--sector-size", "512", "--uuid", "12345678-1234-1234-1234-123456789abc",
		"--luks2-metadata-size", "32k", "--subsystem", "sub"})
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.options(luksCreateCommon{Type: "luks2", Hash: "sha512", Label: "lbl", KeySlot: 3, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if o.Cipher != "twofish-xts-plain64" || o.KeySize != 256 || o.KDF.Hash != "sha512" || o.MetadataSize != 32<<10 ||
		*o.KeySlot != 3 || o.Label != "lbl" || o.Subsystem != "sub" || o.SectorSize != 512 {
		t.Fatalf("options %+v", o)
	}
	if o2, _ := (&luksCreateFlags{}).options(luksCreateCommon{Encryption: "Serpent", KeySlot: -1}); o2.Cipher != "serpent-xts-plain64" || o2.KeySlot != nil {
		t.Fatalf("--encryption Serpent gave %q", o2.Cipher)
	}
	if _, err := (&luksCreateFlags{}).options(luksCreateCommon{Encryption: "AES-Twofish"}); err == nil {
		t.Fatal("a cascade was accepted for LUKS")
	}

	p := filepath.Join(t.TempDir(), "v.luks")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Truncate(p, 20<<20)
	dev, err := volume.OpenDevice(p, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	cr, err := createLUKS(context.Background(), dev, o, volume.Credentials{Password: []byte("pw")})
	if err != nil {
		t.Fatal(err)
	}
	if cr.Header.UUID != "12345678-1234-1234-1234-123456789abc" || cr.Header.Label != "lbl" || cr.Header.Keyslots[0].Slot != 3 {
		t.Fatalf("header %+v", cr.Header)
	}
	v, err := volume.New(dev, cr.Unlocked, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsprobe.Probe(v); !errors.Is(err, fsprobe.ErrUnknown) {
		t.Fatalf("a fresh volume should hold no filesystem yet: %v", err)
	}
	v.Close()
	bad := o
	bad.SectorSize = 3000
	if _, err := createLUKS(context.Background(), dev, bad, volume.Credentials{Password: []byte("pw")}); exitCodeFor(err) != exitUsage {
		t.Fatalf("a bad sector size: %v (exit %d)", err, exitCodeFor(err))
	}
}
