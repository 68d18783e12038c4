package tcrypt

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

type corpusImage = testdata.TCryptImage

const pwHidden = testdata.TCryptHiddenPassword

func corpus(t testing.TB) []corpusImage { return testdata.TCryptImages(t) }

// hashHint turns the file name's hash into a --hash value.
func hashHint(h string) string { return h }

func openImage(t *testing.T, im corpusImage, hidden bool, password string, hint bool) (*volume.Volume, error) {
	t.Helper()
	o := volume.Options{System: im.System, Hidden: hidden, ReadOnly: true, Warn: func(m string) { t.Log("warning:", m) }}
	if hint {
		o.Hash = hashHint(im.Hash)
	}
	c := volume.Credentials{Password: []byte(password), Keyfiles: im.Keyfiles, PIM: im.PIM}
	return volume.OpenWith(context.Background(), im.Path, c, o)
}

func serialOf(t *testing.T, v *volume.Volume) string {
	t.Helper()
	r, err := fsprobe.Probe(v)
	if err != nil {
		t.Fatalf("no filesystem found in the decrypted data area: %v", err)
	}
	return r.Serial
}

// sameCiphers compares the image name's ciphers with the chain found,
// ignoring order (the file names use TrueCrypt's or cryptsetup's order).
func sameCiphers(name []string, chain string) bool {
	c, err := ciphers.LookupChain(chain)
	if err != nil {
		return false
	}
	var a, b []string
	for _, x := range name {
		x = strings.ToLower(strings.ReplaceAll(x, "_", ""))
		if x == "des3ede" {
			x = "tripledes"
		}
		a = append(a, x)
	}
	for _, x := range c.Ciphers {
		x = strings.NewReplacer(" ", "", "-le", "").Replace(strings.ToLower(x))
		b = append(b, x)
	}
	sort.Strings(a)
	sort.Strings(b)
	return strings.Join(a, ",") == strings.Join(b, ",")
}

// TestCorpusOpensEveryImage opens all 93 images and the 11 hidden volumes
// inside them and checks the FAT serial of the filesystem inside.
func TestCorpusOpensEveryImage(t *testing.T) {
	ims := corpus(t)
	var outer, hidden, wiped int
	for _, im := range ims {
		im := im
		t.Run(im.Name, func(t *testing.T) {
			if im.Slow() && testing.Short() {
				t.Skip("Argon2id at PIM 33 needs 1 GiB and ~15 passes; skipped in -short")
			}
			v, err := openImage(t, im, false, im.Password, true)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer v.Close()
			in := v.Info()
			if wipedAt(t, im.Path, in.DataOffset) {
				// The corpus makers zeroed these data areas (cryptsetup
				// cannot map their legacy modes, so it never read them):
				// only the header can be checked.
				t.Logf("data area is all zero bytes in the file (wiped): header checked, serial not checkable")
				wiped++
			} else if got := serialOf(t, v); got != "DEAD-BABE" {
				t.Fatalf("serial %q, want DEAD-BABE (info %+v)", got, in)
			}
			if in.Mode != im.Mode {
				t.Errorf("mode %q, want %q", in.Mode, im.Mode)
			}
			if !sameCiphers(im.Ciphers, in.Encryption) {
				t.Errorf("encryption %q does not match the image's %v", in.Encryption, im.Ciphers)
			}
			outer++
			if !im.Hidden {
				return
			}
			hv, err := openImage(t, im, true, pwHidden, true)
			if err != nil {
				t.Fatalf("open hidden: %v", err)
			}
			defer hv.Close()
			if wipedAt(t, im.Path, hv.Info().DataOffset) {
				t.Logf("hidden data area is all zero bytes in the file (wiped): header checked, serial not checkable")
				wiped++
			} else if got := serialOf(t, hv); got != "CAFE-BABE" {
				t.Fatalf("hidden serial %q, want CAFE-BABE", got)
			}
			if !hv.Info().Hidden {
				t.Error("hidden volume not reported as hidden")
			}
			hidden++
		})
	}
	if !testing.Short() && (outer != 93 || hidden != 11) {
		t.Errorf("opened %d/93 outer and %d/11 hidden volumes", outer, hidden)
	}
	t.Logf("opened %d outer and %d hidden volumes; %d data areas were wiped in the corpus", outer, hidden, wiped)
}

func wipedAt(t *testing.T, path string, off int64) bool { return testdata.RawZeroAt(t, path, off) }

// TestCorpusWrongPassword checks that each kind of image refuses a wrong
// password cleanly with ErrWrongPassword.
func TestCorpusWrongPassword(t *testing.T) {
	seen := map[string]bool{}
	for _, im := range corpus(t) {
		kind := strings.SplitN(im.Name, "-", 2)[0] + "-" + im.Mode
		if seen[kind] || im.Slow() {
			continue
		}
		seen[kind] = true
		im := im
		t.Run(kind, func(t *testing.T) {
			// The PRF hint and, for TrueCrypt images, the format keep
			// this short: a wrong password tries every header copy
			// (normal, hidden, both backups) with each KDF left.
			o := volume.Options{System: im.System, ReadOnly: true, Hash: hashHint(im.Hash)}
			if strings.HasPrefix(im.Name, "tc") {
				o.Type = "truecrypt"
			}
			c := volume.Credentials{Password: []byte("wrong password!"), Keyfiles: im.Keyfiles, PIM: im.PIM}
			v, err := volume.OpenWith(context.Background(), im.Path, c, o)
			if err == nil {
				v.Close()
				t.Fatal("opened with a wrong password")
			}
			if !errors.Is(err, volume.ErrWrongPassword) {
				t.Fatalf("error %v is not ErrWrongPassword", err)
			}
		})
	}
}
