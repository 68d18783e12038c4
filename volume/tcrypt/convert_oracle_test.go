package tcrypt

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/oracle"
	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// veraCryptSum mounts vol with VeraCrypt (read-only, user-space
// decryption) and returns the sha256 of the data area VeraCrypt decrypted.
func veraCryptSum(t *testing.T, vc *oracle.VeraCrypt, vol string, o oracle.MountOptions) ([32]byte, error) {
	t.Helper()
	o.ReadOnly = true
	m, err := vc.Mount(context.Background(), vol, o)
	if err != nil {
		return [32]byte{}, err
	}
	defer func() {
		if err := m.Dismount(); err != nil {
			t.Errorf("dismount: %v", err)
		}
	}()
	f, err := os.Open(m.Dev)
	if err != nil {
		return [32]byte{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return [32]byte{}, err
	}
	var s [32]byte
	h.Sum(s[:0])
	return s, nil
}

// TestConvertedOpensInVeraCrypt126 is the acceptance test:
// TrueCrypt volumes of the corpus and one made by cryptvol, which VeraCrypt
// 1.26.24 refuses (it dropped TrueCrypt volumes), open in it once
// converted, and the data area it decrypts is byte for byte (sha256) the
// one cryptvol decrypted before the conversion: the same files. The
// default run takes a handful of images (one at VeraCrypt's default PIM,
// the others at PIM 1 to keep it quick); CONVERT_ORACLE_ALL=1 takes every
// TrueCrypt 6/7 image and its hidden volume.
func TestConvertedOpensInVeraCrypt126(t *testing.T) {
	vc := testdata.VeraCrypt(t, oracle.VeraCrypt12624)
	all := os.Getenv("CONVERT_ORACLE_ALL") == "1"
	pick := map[string]bool{
		"tc_5-sha512-xts-aes":                        true, // at the default PIM
		"tc_4-ripemd160-xts-aes":                     true, // RIPEMD-160: gone from VeraCrypt 1.26
		"tc_5-sha512-xts-serpent-twofish-aes-hidden": true,
		"tck_5-sha512-xts-aes":                       true, // keyfiles
		"tc_5-whirlpool-xts-aes":                     true,
	}
	type job struct {
		name, path string
		creds      volume.Credentials
		hidden     bool
		pim        int
	}
	var jobs []job
	for _, im := range convertibleCorpus(t) {
		if !all && !pick[im.Name] {
			continue
		}
		pim := 1
		if im.Name == "tc_5-sha512-xts-aes" {
			pim = 0
		}
		jobs = append(jobs, job{im.Name, im.Path, volume.Credentials{Password: []byte(im.Password), Keyfiles: im.Keyfiles}, false, pim})
		if im.Hidden {
			jobs = append(jobs, job{im.Name + "/hidden", im.Path, volume.Credentials{Password: []byte(pwHidden)}, true, 1})
		}
	}
	// One made by cryptvol: TrueCrypt format, RIPEMD-160, a cascade, FAT.
	own := newFATVolume(t, volume.Credentials{Password: []byte("made by cryptvol")}, CreateOptions{TrueCrypt: true, Hash: "RIPEMD-160", Encryption: "Twofish-Serpent"})
	own.Close()
	jobs = append(jobs, job{"cryptvol-truecrypt", own.Name(), volume.Credentials{Password: []byte("made by cryptvol")}, false, 1})

	refusedBefore := false
	for _, j := range jobs {
		t.Run(j.name, func(t *testing.T) {
			path := j.path
			if !strings.HasPrefix(j.name, "cryptvol") {
				path = testdata.CopyFile(t, j.path)
			}
			mo := oracle.MountOptions{Password: string(j.creds.Password), Keyfiles: j.creds.Keyfiles}
			if !refusedBefore {
				// VeraCrypt 1.26 cannot open it as it is: the conversion
				// is needed. (The hash hint only spares VeraCrypt trying
				// Argon2id at its default cost.)
				before := mo
				before.Hash = "sha512"
				if _, err := veraCryptSum(t, vc, path, before); !errors.Is(err, oracle.ErrRefused) {
					t.Fatalf("VeraCrypt 1.26.24 did not refuse the TrueCrypt volume: %v", err)
				}
				refusedBefore = true
			}
			dev, err := volume.OpenDevice(path, false)
			if err != nil {
				t.Fatal(err)
			}
			v, err := openWith(t, dev, j.creds, volume.Options{Hidden: j.hidden})
			if err != nil {
				dev.Close()
				t.Fatal(err)
			}
			want := sha256.Sum256(readAll(t, v))
			v.Close()
			_, err = ConvertToVeraCrypt(context.Background(), dev, j.creds, ConvertOptions{Open: volume.Options{Hidden: j.hidden}, PIM: j.pim})
			dev.Close()
			if err != nil {
				t.Fatal(err)
			}
			mo.PIM, mo.Hash = j.pim, "sha512"
			got, err := veraCryptSum(t, vc, path, mo)
			if err != nil {
				t.Fatalf("VeraCrypt 1.26.24 does not open the converted volume: %v", err)
			}
			if got != want {
				t.Fatalf("VeraCrypt decrypts a different data area: sha256 %x, cryptvol decrypted %x before the conversion", got, want)
			}
		})
	}
}
