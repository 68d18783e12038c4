package luks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
)

// TestCryptsetupAcceptsOurVolumes creates LUKS1 and LUKS2 volumes with
// AES, Serpent and Twofish in xts-plain64 under PBKDF2 and Argon2id, and
// checks with cryptsetup: luksDump shows the same cipher, key size,
// keyslot and UUID as our header view, --test-passphrase accepts the
// passphrase, and --dump-volume-key gives our volume key.
func TestCryptsetupAcceptsOurVolumes(t *testing.T) {
	const pass = "correct horse battery staple"
	for _, typ := range []string{"luks1", "luks2"} {
		for _, cipher := range []string{"aes", "serpent", "twofish"} {
			for _, pbkdf := range []string{"pbkdf2", "argon2id"} {
				if typ == "luks1" && pbkdf != "pbkdf2" {
					continue
				}
				typ, cipher, pbkdf := typ, cipher, pbkdf
				t.Run(typ+"-"+cipher+"-"+pbkdf, func(t *testing.T) {
					t.Parallel()
					p, dev := newImage(t, 20<<20)
					o := CreateOptions{Type: typ, Cipher: cipher + "-xts-plain64", KDF: fastKDF(pbkdf), Quick: true}
					if typ == "luks2" && !cryptsetupHasCipher(cipher) {
						// cryptsetup decrypts keyslots in user space with
						// OpenSSL, which has no Serpent or Twofish (the
						// kernel route needs device-mapper): give the
						// keyslot AES, as --keyslot-cipher does.
						o.KeyslotCipher = "aes-xts-plain64"
					}
					cr, err := Create(context.Background(), dev, o, pw(pass))
					if err != nil {
						t.Fatal(err)
					}
					h := cr.Header
					if cr.Unlocked.Info.UUID != h.UUID || cr.Unlocked.DataSize != 20<<20-h.DataOffset {
						t.Fatalf("Created.Unlocked %+v", cr.Unlocked.Info)
					}
					// The Unlocked handed back holds the volume key.
					sameKey(t, cr.Unlocked.MasterKey, masterKeyOf(t, p, pw(pass), volume.Options{}))
					dev.Sync()
					checkAgainstLuksDump(t, p, h)
					if typ == "luks1" && !cryptsetupHasCipher(cipher) {
						t.Logf("NOT CHECKED: cryptsetup on this machine cannot decrypt %s keyslots (no device-mapper, no kernel %s): "+
							"luksDump compared, passphrase and volume key not verified by cryptsetup", cipher, cipher)
						return
					}
					if out, ok := cryptsetup(t, pass, "open", "--test-passphrase", "--key-file", "-", p); !ok {
						t.Fatalf("cryptsetup rejects the passphrase:\n%s", out)
					}
					if _, ok := cryptsetup(t, "wrong", "open", "--test-passphrase", "--key-file", "-", p); ok {
						t.Fatal("cryptsetup accepts a wrong passphrase")
					}
					ours := masterKeyOf(t, p, pw(pass), volume.Options{})
					sameKey(t, ours, dumpVolumeKey(t, pass, p))
					v, err := openPath(t, p, pw(pass), volume.Options{ReadOnly: true})
					if err != nil {
						t.Fatal(err)
					}
					in := v.Info()
					v.Close()
					if in.Format != typ || in.Encryption != cipher+"-xts-plain64" || in.KeySize != 512 || in.UUID != h.UUID {
						t.Fatalf("info %+v", in)
					}
					if want := map[string]string{"pbkdf2": "pbkdf2-sha256", "argon2id": "argon2id"}[pbkdf]; in.Hash != want {
						t.Fatalf("info hash %q, want %q", in.Hash, want)
					}
				})
			}
		}
	}
}

// cryptsetupHasCipher reports whether cryptsetup here can run cipher in
// XTS mode in user space (its OpenSSL backend), which --test-passphrase
// and --dump-volume-key need without device-mapper.
func cryptsetupHasCipher(cipher string) bool { return cipher == "aes" }

// checkAgainstLuksDump compares cryptsetup's luksDump with our header view.
func checkAgainstLuksDump(t *testing.T, path string, h *Header) {
	t.Helper()
	out := mustCryptsetup(t, "", "luksDump", path)
	if got := dumpField(out, "UUID"); got != h.UUID {
		t.Errorf("UUID: cryptsetup %q, ours %q", got, h.UUID)
	}
	if h.Version == 1 {
		cipher := dumpField(out, "Cipher name") + "-" + dumpField(out, "Cipher mode")
		if cipher != h.Cipher || dumpField(out, "MK bits") != fmt.Sprint(h.KeySize) {
			t.Errorf("cryptsetup sees %s, %s bits; ours %s, %d", cipher, dumpField(out, "MK bits"), h.Cipher, h.KeySize)
		}
		for _, k := range h.Keyslots {
			state := "DISABLED"
			if k.Active {
				state = "ENABLED"
			}
			if !strings.Contains(out, fmt.Sprintf("Key Slot %d: %s", k.Slot, state)) {
				t.Errorf("cryptsetup does not show keyslot %d %s:\n%s", k.Slot, state, out)
			}
		}
		return
	}
	js := mustCryptsetup(t, "", "luksDump", "--dump-json-metadata", path)
	var doc jsonDoc
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("cryptsetup's JSON: %v", err)
	}
	if doc.Segments["0"].Encryption != h.Cipher || int(doc.Segments["0"].SectorSize) != h.SectorSize {
		t.Errorf("segment: cryptsetup %+v, ours %s/%d", doc.Segments["0"], h.Cipher, h.SectorSize)
	}
	if len(doc.Keyslots) != len(h.Keyslots) {
		t.Errorf("cryptsetup sees %d keyslots, we %d", len(doc.Keyslots), len(h.Keyslots))
	}
	for _, k := range h.Keyslots {
		ks, ok := doc.Keyslots[fmt.Sprint(k.Slot)]
		if !ok || int(*ks.KeySize)*8 != k.KeySize || ks.KDF.Type != k.KDF {
			t.Errorf("keyslot %d: cryptsetup %+v, ours %+v", k.Slot, ks, k)
		}
	}
}

// TestWeOpenCryptsetupVolumes formats volumes with cryptsetup and opens
// them here: the volume key must be the one cryptsetup dumps.
func TestWeOpenCryptsetupVolumes(t *testing.T) {
	const pass = "Qx3qn46vq0v"
	fast := []string{"--pbkdf-force-iterations", "1000"}
	fastArgon := []string{"--pbkdf-force-iterations", "4", "--pbkdf-memory", "1024", "--pbkdf-parallel", "1"}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"luks2-default-argon2id", append([]string{"--type", "luks2"}, fastArgon...)},
		{"luks2-argon2i-sha512", append([]string{"--type", "luks2", "--pbkdf", "argon2i", "--hash", "sha512"}, fastArgon...)},
		{"luks2-pbkdf2-serpent", append([]string{"--type", "luks2", "--pbkdf", "pbkdf2", "--cipher", "serpent-xts-plain64"}, fast...)},
		{"luks2-twofish-256-sector512", append([]string{"--type", "luks2", "--pbkdf", "pbkdf2", "--cipher", "twofish-xts-plain64", "--key-size", "256", "--sector-size", "512"}, fast...)},
		{"luks2-cbc-essiv", append([]string{"--type", "luks2", "--pbkdf", "pbkdf2", "--cipher", "aes-cbc-essiv:sha256", "--key-size", "256"}, fast...)},
		{"luks2-metadata-64k", append([]string{"--type", "luks2", "--pbkdf", "pbkdf2", "--luks2-metadata-size", "64k", "--label", "cryptvol", "--subsystem", "test"}, fast...)},
		{"luks2-xts-plain", append([]string{"--type", "luks2", "--pbkdf", "pbkdf2", "--cipher", "aes-xts-plain"}, fast...)},
		{"luks1-default", append([]string{"--type", "luks1"}, fast...)},
		{"luks1-sha1-cbc-plain64", append([]string{"--type", "luks1", "--hash", "sha1", "--cipher", "aes-cbc-plain64", "--key-size", "128"}, fast...)},
		{"luks1-ripemd160-lrw", append([]string{"--type", "luks1", "--hash", "ripemd160", "--cipher", "aes-lrw-benbi", "--key-size", "384"}, fast...)},
		{"luks1-whirlpool-serpent-essiv", append([]string{"--type", "luks1", "--hash", "whirlpool", "--cipher", "serpent-cbc-essiv:sha256", "--key-size", "256"}, fast...)},
		{"luks1-camellia", append([]string{"--type", "luks1", "--cipher", "camellia-xts-plain64"}, fast...)},
		// Needs device-mapper for luksFormat to check the cipher.
		{"luks2-adiantum", append([]string{"--type", "luks2", "--pbkdf", "pbkdf2", "--cipher", "xchacha12,aes-adiantum-plain64", "--key-size", "256"}, fast...)},
		{"luks2-adiantum-xchacha20-aes-slot", append([]string{"--type", "luks2", "--pbkdf", "pbkdf2", "--cipher", "xchacha20,aes-adiantum-plain64", "--key-size", "256", "--keyslot-cipher", "aes-xts-plain64", "--keyslot-key-size", "512"}, fast...)},
	} {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := newImage(t, 20<<20)
			args := append([]string{"luksFormat", "--batch-mode", "--key-file", "-"}, tc.args...)
			if out, ok := cryptsetup(t, pass, append(args, p)...); !ok {
				if strings.Contains(out, "device-mapper") {
					t.Skipf("cryptsetup on this machine cannot format this cipher without device-mapper: %s", strings.TrimSpace(out))
				}
				t.Fatalf("cryptsetup luksFormat: %s", out)
			}
			theirs := dumpVolumeKey(t, pass, p)
			sameKey(t, masterKeyOf(t, p, pw(pass), volume.Options{}), theirs)
			f, _ := os.Open(p)
			defer f.Close()
			h, err := Inspect(&fileDev{f})
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstLuksDump(t, p, h)
		})
	}
}

// fileDev is a read-only Device over an *os.File.
type fileDev struct{ *os.File }

func (f *fileDev) Size() int64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}
func (f *fileDev) WriteAt([]byte, int64) (int, error) { return 0, os.ErrPermission }

// TestDetachedHeader: a cryptsetup volume with --header opens with
// Options.Header, and one we create with a detached header opens with
// cryptsetup --header.
func TestDetachedHeader(t *testing.T) {
	const pass = "detached secret"
	dir := t.TempDir()
	// cryptsetup's detached header.
	data, _ := newImage(t, 8<<20)
	hdr := filepath.Join(dir, "theirs.hdr")
	mustCryptsetup(t, pass, "luksFormat", "--batch-mode", "--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000",
		"--key-file", "-", "--header", hdr, data)
	sameKey(t, masterKeyOf(t, data, pw(pass), volume.Options{Header: hdr}), dumpVolumeKey(t, pass, hdr))
	// Ours, LUKS1 and LUKS2.
	for _, typ := range []string{"luks1", "luks2"} {
		dataPath, dataDev := newImage(t, 4<<20)
		hp := filepath.Join(dir, typ+".hdr")
		hd := openRaw(t, createEmpty(t, hp), false)
		if _, err := Create(context.Background(), dataDev, CreateOptions{Type: typ, KDF: fastKDF("pbkdf2"), Header: hd, Quick: true}, pw(pass)); err != nil {
			t.Fatal(err)
		}
		hd.Close()
		v, err := openPath(t, dataPath, pw(pass), volume.Options{Header: hp})
		if err != nil {
			t.Fatal(err)
		}
		if in := v.Info(); in.DataOffset != 0 || in.DataSize != 4<<20 {
			t.Errorf("%s: data area %d+%d, want the whole 4 MiB device", typ, in.DataOffset, in.DataSize)
		}
		key := v.MasterKey()
		v.Close()
		if out, ok := cryptsetup(t, pass, "open", "--test-passphrase", "--key-file", "-", "--header", hp, dataPath); !ok {
			t.Fatalf("%s: cryptsetup rejects our detached header:\n%s", typ, out)
		}
		sameKey(t, key, dumpVolumeKey(t, pass, hp))
	}
}

func createEmpty(t *testing.T, p string) string {
	t.Helper()
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCorpusVolumeKeysMatchCryptsetup: for the images whose data area was
// wiped, the volume key we unlock equals the one cryptsetup dumps.
func TestCorpusVolumeKeysMatchCryptsetup(t *testing.T) {
	for _, tc := range []struct{ file, pass string }{
		{"compatimage.img.xz", compatPassphrase},
		{"compatv10image.img.xz", compatPassphrase},
		{"compatimage2.img.xz", compatPassphrase},
		{"luks2_mda_images.tar.xz/test_image_4096", mdaPassphrase},
		{"luks2_mda_images.tar.xz/test_image_16", mdaPassphrase},
	} {
		p := unpackMember(t, tc.file)
		sameKey(t, masterKeyOf(t, p, pw(tc.pass), volume.Options{}), dumpVolumeKey(t, tc.pass, p))
	}
}
