package luks

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// dataSum opens the volume at path read-only and returns its volume key
// and the sha256 of its decrypted data area.
func dataSum(t testing.TB, path string, c volume.Credentials) ([]byte, [32]byte, string) {
	t.Helper()
	v, err := openPath(t, path, c, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("opening %s: %v", filepath.Base(path), err)
	}
	defer v.Close()
	buf := make([]byte, v.Size())
	if _, err := v.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	return v.MasterKey(), sha256.Sum256(buf), v.Info().Format
}

func convertFile(t testing.TB, path, to string) error {
	t.Helper()
	d := openDev(t, path)
	defer d.Close()
	return Convert(context.Background(), d, to, ConvertOptions{Warn: func(m string) { t.Log("warning:", m) }})
}

// TestConvertLUKS1CorpusRoundTrip converts every LUKS1 image of the corpus
// to LUKS2 and back. After each step cryptsetup's luksDump reads the
// header as the new version, cryptsetup's open --test-passphrase accepts
// the key file (where its keyslot cipher is AES: cryptsetup here has no
// kernel crypto for Serpent and Twofish), cryptsetup's own conversion
// takes our result on to the other version, and cryptvol opens the volume
// with the same volume key and data area (sha256) as before.
func TestConvertLUKS1CorpusRoundTrip(t *testing.T) {
	dir := filepath.Join(testdata.Unpack(t, "luks1-images.tar.xz"), "luks1-images")
	imgs, _ := filepath.Glob(filepath.Join(dir, "*.img"))
	sort.Strings(imgs)
	if len(imgs) != 12 {
		t.Fatalf("found %d images, want 12", len(imgs))
	}
	keyfile := filepath.Join(dir, "keyfile1")
	c := volume.Credentials{Keyfiles: []string{keyfile}}
	for _, src := range imgs {
		src := src
		t.Run(filepath.Base(src), func(t *testing.T) {
			t.Parallel()
			// cryptsetup here decrypts keyslots with OpenSSL only:
			// AES in XTS or CBC with a standard IV.
			aes := strings.HasPrefix(filepath.Base(src), "luks1_aes") && !strings.Contains(src, "lrw") && !strings.Contains(src, "wp256")
			p := testdata.CopyFile(t, src)
			key, sum, _ := dataSum(t, p, c)
			check := func(step, version string) {
				t.Helper()
				out := mustCryptsetup(t, "", "luksDump", p)
				if got := dumpField(out, "Version"); got != version {
					t.Fatalf("%s: cryptsetup luksDump says version %q:\n%s", step, got, out)
				}
				if aes {
					if out, ok := cryptsetup(t, "", "open", "--test-passphrase", "--key-file", keyfile, p); !ok {
						t.Fatalf("%s: cryptsetup rejects the key file:\n%s", step, out)
					}
				}
				k, s, f := dataSum(t, p, c)
				sameKey(t, k, key)
				if s != sum || f != "luks"+version {
					t.Fatalf("%s: data area or format (%s) changed", step, f)
				}
			}
			if err := convertFile(t, p, "luks2"); err != nil {
				t.Fatal(err)
			}
			check("to LUKS2", "2")
			if err := convertFile(t, p, "luks2"); !errors.Is(err, ErrAlreadyType) {
				t.Fatalf("converting LUKS2 to LUKS2: %v", err)
			}
			if err := convertFile(t, p, "luks1"); err != nil {
				t.Fatal(err)
			}
			check("back to LUKS1", "1")
			if !aes {
				return
			}
			// cryptsetup continues from what we wrote, both ways, and we
			// from what it wrote.
			mustCryptsetup(t, "", "convert", "--batch-mode", "--type", "luks2", p)
			check("cryptsetup to LUKS2", "2")
			if err := convertFile(t, p, "luks1"); err != nil {
				t.Fatal(err)
			}
			check("ours back from cryptsetup's LUKS2", "1")
			if err := convertFile(t, p, "luks2"); err != nil {
				t.Fatal(err)
			}
			mustCryptsetup(t, "", "convert", "--batch-mode", "--type", "luks1", p)
			check("cryptsetup back from our LUKS2", "1")
		})
	}
}

// tornDevice lets the first allowed writes through, lands only the first
// 512 bytes of the next one (a power cut inside it) and fails every write
// after.
type tornDevice struct {
	volume.Device
	allowed, done int
}

func (d *tornDevice) WriteAt(p []byte, off int64) (int, error) {
	d.done++
	switch {
	case d.done <= d.allowed:
		return d.Device.WriteAt(p, off)
	case d.done == d.allowed+1 && len(p) > 512:
		d.Device.WriteAt(p[:512], off)
	}
	return 0, errCrash
}

// TestConvertCrashSafe interrupts both conversions after every write, and
// inside every write, and checks that the volume then opens with its
// volume key and data intact, as one version or the other, here and (AES
// keyslots) in cryptsetup.
func TestConvertCrashSafe(t *testing.T) {
	dir := filepath.Join(testdata.Unpack(t, "luks1-images.tar.xz"), "luks1-images")
	keyfile := filepath.Join(dir, "keyfile1")
	corpusCreds := volume.Credentials{Keyfiles: []string{keyfile}}
	src := filepath.Join(dir, "luks1_aes-xts-plain64-sha256.img")
	fromLUKS1 := testdata.CopyFile(t, src)
	backFromLUKS2 := testdata.CopyFile(t, src)
	if err := convertFile(t, backFromLUKS2, "luks2"); err != nil {
		t.Fatal(err)
	}
	// A LUKS2 volume made as such: its keyslot 0 sits where LUKS1's first
	// keyslot goes and is moved first.
	native, dev := newImage(t, 20<<20)
	if _, err := Create(context.Background(), dev, CreateOptions{KDF: fastKDF("pbkdf2"), SectorSize: 512, Quick: true}, pw("native")); err != nil {
		t.Fatal(err)
	}
	dev.Close()
	for _, tc := range []struct {
		name, base, to string
		creds          volume.Credentials
		cryptsetupKey  []string
		stdin          string
	}{
		{"luks1-to-luks2", fromLUKS1, "luks2", corpusCreds, []string{"--key-file", keyfile}, ""},
		{"luks2-to-luks1", backFromLUKS2, "luks1", corpusCreds, []string{"--key-file", keyfile}, ""},
		{"native-luks2-to-luks1", native, "luks1", pw("native"), []string{"--key-file", "-"}, "native"},
	} {
		key, sum, _ := dataSum(t, tc.base, tc.creds)
		full := &crashDevice{Device: openDev(t, testdata.CopyFile(t, tc.base)), allowed: 1 << 30}
		if err := Convert(context.Background(), full, tc.to, ConvertOptions{}); err != nil {
			t.Fatal(err)
		}
		for k := 0; k <= full.done; k++ {
			for _, torn := range []bool{false, true} {
				name := fmt.Sprintf("%s/after-%d-of-%d-writes/torn=%v", tc.name, k, full.done, torn)
				p := testdata.CopyFile(t, tc.base)
				var d volume.Device = &crashDevice{Device: openDev(t, p), allowed: k}
				if torn {
					d = &tornDevice{Device: openDev(t, p), allowed: k}
				}
				err := Convert(context.Background(), d, tc.to, ConvertOptions{})
				if k < full.done && !errors.Is(err, errCrash) {
					t.Errorf("%s: got %v, want the simulated crash", name, err)
				}
				v, err := openPath(t, p, tc.creds, volume.Options{ReadOnly: true})
				if err != nil {
					t.Errorf("%s: the volume does not open: %v", name, err)
					continue
				}
				v.Close()
				k2, s2, _ := dataSum(t, p, tc.creds)
				if string(k2) != string(key) || s2 != sum {
					t.Errorf("%s: volume key or data changed", name)
				}
				args := append(append([]string{"open", "--test-passphrase"}, tc.cryptsetupKey...), p)
				if out, ok := cryptsetup(t, tc.stdin, args...); !ok {
					t.Errorf("%s: cryptvol opens it, cryptsetup does not:\n%s", name, out)
				}
			}
		}
	}
}

// TestConvertToLUKS1Refuses: what LUKS1 cannot hold is refused with a
// reason and nothing written: Argon2 keyslots, 4096-byte sectors, a
// keyslot beyond 7, tokens, a keyslot cipher other than the data cipher.
// Labels are dropped with a warning, as cryptsetup does.
func TestConvertToLUKS1Refuses(t *testing.T) {
	ctx := context.Background()
	slot9 := 9
	for _, tc := range []struct {
		name string
		o    CreateOptions
		edit func(t *testing.T, d volume.Device)
		want string
	}{
		{"argon2id", CreateOptions{KDF: fastKDF("argon2id"), SectorSize: 512}, nil, "PBKDF2 only"},
		{"sector4096", CreateOptions{KDF: fastKDF("pbkdf2"), SectorSize: 4096}, nil, "512-byte"},
		{"slot9", CreateOptions{KDF: fastKDF("pbkdf2"), KeySlot: &slot9, SectorSize: 512}, nil, "0 to 7"},
		{"keyslot-cipher", CreateOptions{KDF: fastKDF("pbkdf2"), Cipher: "serpent-xts-plain64", KeyslotCipher: "aes-xts-plain64", SectorSize: 512}, nil, "data cipher"},
		{"token", CreateOptions{KDF: fastKDF("pbkdf2"), SectorSize: 512}, func(t *testing.T, d volume.Device) {
			l, err := load(d, "luks2")
			if err != nil {
				t.Fatal(err)
			}
			meta, err := editLUKS2(l.v2, func(raw map[string]any) {
				object(raw, "tokens")["0"] = map[string]any{"type": "example", "keyslots": []any{"0"}}
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := commitLUKS2(d, l.v2, meta, nil, false); err != nil {
				t.Fatal(err)
			}
		}, "token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, dev := newImage(t, 20<<20)
			tc.o.Type, tc.o.Quick = "luks2", true
			if _, err := Create(ctx, dev, tc.o, pw("pass")); err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				tc.edit(t, dev)
			}
			before, _ := os.ReadFile(p)
			err := Convert(ctx, dev, "luks1", ConvertOptions{})
			if !errors.Is(err, ErrCannotConvert) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a refusal mentioning %q", err, tc.want)
			}
			if after, _ := os.ReadFile(p); string(after) != string(before) {
				t.Fatal("a refused conversion changed the file")
			}
		})
	}
	// A label is dropped with a warning.
	p, dev := newImage(t, 20<<20)
	if _, err := Create(ctx, dev, CreateOptions{Type: "luks2", KDF: fastKDF("pbkdf2"), Label: "mine", SectorSize: 512, Quick: true}, pw("pass")); err != nil {
		t.Fatal(err)
	}
	var warned []string
	if err := Convert(ctx, dev, "luks1", ConvertOptions{Warn: func(m string) { warned = append(warned, m) }}); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "mine") {
		t.Fatalf("warnings %q", warned)
	}
	if out, ok := cryptsetup(t, "pass", "open", "--test-passphrase", "--key-file", "-", p); !ok {
		t.Fatalf("cryptsetup rejects the converted volume:\n%s", out)
	}
}

// TestConvertCreatedBothWays converts volumes made here with several
// keyslots and a detached header.
func TestConvertCreatedBothWays(t *testing.T) {
	ctx := context.Background()
	p, dev := newImage(t, 20<<20)
	if _, err := Create(ctx, dev, CreateOptions{Type: "luks1", KDF: fastKDF("pbkdf2")}, pw("first")); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"second", "third"} {
		if _, err := AddKey(ctx, dev, pw("first"), []byte(s), fastSlot()); err != nil {
			t.Fatal(err)
		}
	}
	key, sum, _ := dataSum(t, p, pw("first"))
	for _, to := range []string{"luks2", "luks1", "luks2"} {
		if err := Convert(ctx, dev, to, ConvertOptions{}); err != nil {
			t.Fatalf("to %s: %v", to, err)
		}
		for _, s := range []string{"first", "second", "third"} {
			k, s2, f := dataSum(t, p, pw(s))
			if string(k) != string(key) || s2 != sum || f != to {
				t.Fatalf("to %s, passphrase %s: key, data or format (%s) differs", to, s, f)
			}
			if out, ok := cryptsetup(t, s, "open", "--test-passphrase", "--key-file", "-", p); !ok {
				t.Fatalf("to %s: cryptsetup rejects %q:\n%s", to, s, out)
			}
		}
	}
	// A LUKS2 volume made as such goes to LUKS1 in a layout cryptsetup
	// converts back.
	np, ndev := newImage(t, 20<<20)
	if _, err := Create(ctx, ndev, CreateOptions{KDF: fastKDF("pbkdf2"), SectorSize: 512, Quick: true}, pw("native")); err != nil {
		t.Fatal(err)
	}
	nkey, nsum, _ := dataSum(t, np, pw("native"))
	if err := Convert(ctx, ndev, "luks1", ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCryptsetup(t, "", "convert", "--batch-mode", "--type", "luks2", np)
	if k, s2, f := dataSum(t, np, pw("native")); string(k) != string(nkey) || s2 != nsum || f != "luks2" {
		t.Fatal("native LUKS2 to LUKS1 (ours) and back (cryptsetup): key, data or format changed")
	}

	// With keyslots 0 to 5 all in use, every keyslot still moves to where
	// cryptsetup's conversion puts it (by way of the free places), and
	// cryptsetup takes the result back to LUKS1. (Before issue 29 this
	// was refused: keyslot 0 only ever traded places with a free keyslot
	// among 1 to 5.)
	p2, dev2 := newImage(t, 20<<20)
	if _, err := Create(ctx, dev2, CreateOptions{Type: "luks1", KDF: fastKDF("pbkdf2"), Quick: true}, pw("0")); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		if _, err := AddKey(ctx, dev2, pw("0"), []byte(fmt.Sprint(i)), fastSlot()); err != nil {
			t.Fatal(err)
		}
	}
	key2, sum2, _ := dataSum(t, p2, pw("0"))
	if err := Convert(ctx, dev2, "luks2", ConvertOptions{}); err != nil {
		t.Fatalf("six keyslots: %v", err)
	}
	mustCryptsetup(t, "", "convert", "--batch-mode", "--type", "luks1", p2)
	for i := 0; i <= 5; i++ {
		if k, s2, f := dataSum(t, p2, pw(fmt.Sprint(i))); string(k) != string(key2) || s2 != sum2 || f != "luks1" {
			t.Fatalf("six keyslots, ours to LUKS2 and cryptsetup's back: keyslot %d: key, data or format (%s) changed", i, f)
		}
	}

	// A detached LUKS1 header.
	hp, hdr := newImage(t, 0)
	dp, data := newImage(t, 8<<20)
	if _, err := Create(ctx, data, CreateOptions{Type: "luks1", KDF: fastKDF("pbkdf2"), Header: hdr, Quick: true}, pw("detached")); err != nil {
		t.Fatal(err)
	}
	hdr.Close()
	hdr = openDev(t, hp)
	want := masterKeyOf(t, dp, pw("detached"), volume.Options{Header: hp})
	if err := Convert(ctx, hdr, "luks2", ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	sameKey(t, masterKeyOf(t, dp, pw("detached"), volume.Options{Header: hp, Type: "luks2"}), want)
	if out, ok := cryptsetup(t, "detached", "open", "--test-passphrase", "--key-file", "-", "--header", hp, dp); !ok {
		t.Fatalf("cryptsetup rejects the converted detached header:\n%s", out)
	}
}
