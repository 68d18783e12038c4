package luks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// The cryptsetup test images (../shared/testdata/cryptsetup) are the
// ground truth: made by real cryptsetup releases, with a FAT filesystem of
// serial DEAD-BABE at the start of each data area.

const (
	mdaPassphrase    = "Qx3qn46vq0v"
	compatPassphrase = "compatkey"
	// The header-requirements image of cryptsetup's api-test-2 and the
	// unassigned-keyslot and invalid-cipher images of compat-test2.
	reqsPassphrase    = "blablabl"
	compatTest2PWD1   = "93R4P4pIqAH8"
	expectedFATSerial = "DEAD-BABE"
)

func openFile(t *testing.T, path string, c volume.Credentials, o volume.Options) (*volume.Volume, error) {
	t.Helper()
	o.ReadOnly = true
	o.Warn = func(m string) { t.Log("warning:", m) }
	return volume.OpenWith(context.Background(), path, c, o)
}

// checkFAT probes the decrypted data area. When the encrypted data area of
// the image is all zero bytes (the images were wiped to compress well),
// there is nothing to decrypt: the test says so instead of failing.
func checkFAT(t *testing.T, path string, v *volume.Volume) {
	t.Helper()
	r, err := fsprobe.Probe(v)
	if err == nil {
		if r.Serial != expectedFATSerial {
			t.Fatalf("FAT serial %q, want %s", r.Serial, expectedFATSerial)
		}
		return
	}
	info := v.Info()
	raw := make([]byte, 4096)
	f, ferr := os.Open(path)
	if ferr != nil {
		t.Fatal(ferr)
	}
	defer f.Close()
	n, _ := f.ReadAt(raw, info.DataOffset)
	if n > 0 && bytes.Count(raw[:n], []byte{0}) == n {
		t.Logf("NOTE: the data area of %s at %d is all zero bytes in the file (wiped); nothing to decrypt, key verified by the digest only",
			filepath.Base(path), info.DataOffset)
		return
	}
	t.Fatalf("no filesystem in the decrypted data area: %v", err)
}

func TestLUKS1CorpusImages(t *testing.T) {
	dir := filepath.Join(testdata.Unpack(t, "luks1-images.tar.xz"), "luks1-images")
	imgs, _ := filepath.Glob(filepath.Join(dir, "*.img"))
	sort.Strings(imgs)
	if len(imgs) != 12 {
		t.Fatalf("found %d images, want 12", len(imgs))
	}
	keyfile := filepath.Join(dir, "keyfile1")
	for _, p := range imgs {
		p := p
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			v, err := openFile(t, p, volume.Credentials{Keyfiles: []string{keyfile}}, volume.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			in := v.Info()
			// luks1_CIPHER-MODE-IV-HASH.img: check what the header said.
			name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "luks1_"), ".img")
			parts := strings.Split(name, "-")
			hash := parts[len(parts)-1]
			wantSpec := strings.Join(parts[:len(parts)-1], "-")
			wantSpec = strings.Replace(wantSpec, "essiv-", "essiv:", 1)
			if in.Format != "luks1" || in.Encryption != wantSpec || in.Hash != "pbkdf2-"+hash || *in.KeySlot != 0 {
				t.Errorf("info %+v, want luks1 %s pbkdf2-%s slot 0", in, wantSpec, hash)
			}
			checkFAT(t, p, v)
		})
	}
}

func TestCompatImages(t *testing.T) {
	for _, tc := range []struct {
		file, format, spec, hash string
		keyBits                  int
	}{
		{"compatimage.img.xz", "luks1", "aes-cbc-essiv:sha256", "pbkdf2-sha256", 128},
		{"compatv10image.img.xz", "luks1", "aes-cbc-plain", "pbkdf2-sha1", 128},
		{"compatimage2.img.xz", "luks2", "aes-cbc-essiv:sha256", "", 128},
	} {
		tc := tc
		t.Run(tc.file, func(t *testing.T) {
			p := testdata.Unpack(t, tc.file)
			v, err := openFile(t, p, volume.Credentials{Password: []byte(compatPassphrase)}, volume.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			in := v.Info()
			if in.Format != tc.format || in.Encryption != tc.spec || in.KeySize != tc.keyBits ||
				(tc.hash != "" && in.Hash != tc.hash) || in.UUID == "" {
				t.Errorf("info %+v", in)
			}
			checkFAT(t, p, v)
		})
	}
}

// TestCompatImage2EveryKeyslot opens compatimage2's PBKDF2 and Argon2id
// keyslots one by one.
func TestCompatImage2EveryKeyslot(t *testing.T) {
	p := testdata.Unpack(t, "compatimage2.img.xz")
	// api-test-2 gave keyslot 1 its KEY2 passphrase.
	pass := []string{compatPassphrase, "0123456789abcdef"}
	for slot, kdfName := range []string{"pbkdf2-sha256", "argon2id"} {
		s := slot
		v, err := openFile(t, p, volume.Credentials{Password: []byte(pass[slot]), KeySlot: &s}, volume.Options{Type: "luks2"})
		if err != nil {
			t.Fatalf("slot %d: %v", slot, err)
		}
		if in := v.Info(); in.Hash != kdfName || *in.KeySlot != slot {
			t.Errorf("slot %d: KDF %q slot %d", slot, in.Hash, *in.KeySlot)
		}
		v.Close()
	}
}

func mdaImages(t *testing.T) []string {
	dir := testdata.Unpack(t, "luks2_mda_images.tar.xz")
	imgs, _ := filepath.Glob(filepath.Join(dir, "test_image_*"))
	sort.Strings(imgs)
	if len(imgs) != 9 {
		t.Fatalf("found %d metadata-size images, want 9", len(imgs))
	}
	return imgs
}

func TestLUKS2MetadataSizes(t *testing.T) {
	for _, p := range mdaImages(t) {
		p := p
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Parallel()
			v, err := openFile(t, p, volume.Credentials{Password: []byte(mdaPassphrase)}, volume.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if in := v.Info(); in.Format != "luks2" || in.Encryption != "aes-xts-plain64" {
				t.Errorf("info %+v", in)
			}
			checkFAT(t, p, v)
		})
	}
}

func TestWrongPassphrase(t *testing.T) {
	p := testdata.Unpack(t, "compatimage.img.xz")
	_, err := openFile(t, p, volume.Credentials{Password: []byte("not it")}, volume.Options{})
	if !errors.Is(err, volume.ErrWrongPassword) {
		t.Fatalf("got %v, want ErrWrongPassword", err)
	}
	// --type luks2 on a LUKS1 image is "not this kind of volume".
	_, err = openFile(t, p, volume.Credentials{Password: []byte(compatPassphrase)}, volume.Options{Type: "luks2"})
	if !errors.Is(err, volume.ErrWrongPassword) {
		t.Fatalf("--type luks2 on LUKS1: got %v", err)
	}
}

func TestKeyfileOffsetAndSize(t *testing.T) {
	dir := filepath.Join(testdata.Unpack(t, "luks1-images.tar.xz"), "luks1-images")
	key, err := os.ReadFile(filepath.Join(dir, "keyfile1"))
	if err != nil {
		t.Fatal(err)
	}
	// The same passphrase embedded in a larger file, selected with
	// --keyfile-offset and --keyfile-size.
	padded := filepath.Join(t.TempDir(), "padded")
	if err := os.WriteFile(padded, append(append([]byte("junk-before"), key...), "junk-after"...), 0o600); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "luks1_aes-xts-plain64-sha256.img")
	c := volume.Credentials{Keyfiles: []string{padded}, KeyfileOffset: int64(len("junk-before")), KeyfileSize: int64(len(key))}
	v, err := openFile(t, img, c, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	c.KeyfileSize++
	if _, err := openFile(t, img, c, volume.Options{}); !errors.Is(err, volume.ErrWrongPassword) {
		t.Fatalf("one byte too many: %v", err)
	}
}
