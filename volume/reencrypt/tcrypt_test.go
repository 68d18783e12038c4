package reencrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

var vcCreds = volume.Credentials{Password: []byte("re-encryption test"), PIM: 1}

// TestVeraCryptNewKeyAndCipher re-encrypts a VeraCrypt volume with a new
// key, then with a new cipher cascade: the data reads back the same, the
// master key changed, and the old key no longer decrypts the data area.
func TestVeraCryptNewKeyAndCipher(t *testing.T) {
	p, sum := newVeraCrypt(t, 2<<20, vcCreds, tcrypt.CreateOptions{Encryption: "AES"})
	_, key0, err := sumOf(t, p, vcCreds, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reencrypt(t, p, vcCreds, Options{}, 64<<10)
	got, key1, err := sumOf(t, p, vcCreds, volume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got != sum {
		t.Fatal("the data changed")
	}
	if bytes.Equal(key0, key1) {
		t.Fatal("the master key did not change")
	}
	reencrypt(t, p, vcCreds, Options{Encryption: "Serpent-Twofish-AES"}, 0)
	v, err := volume.OpenWith(context.Background(), p, vcCreds, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if in := v.Info(); in.Encryption != "Serpent-Twofish-AES" || in.Format != "veracrypt" || in.MinProgramVersion != "1.0b" {
		t.Fatalf("after the cipher change: %+v", in)
	}
	v.Close()
	if got, _, _ := sumOf(t, p, vcCreds, volume.Options{}); got != sum {
		t.Fatal("the data changed with the cipher")
	}
	// The header areas hold no re-encryption state any more.
	dev := openDev(t, p)
	defer dev.Close()
	if _, err := Resume(context.Background(), dev, nil, vcCreds, volume.Options{}); !errors.Is(err, ErrNotReencrypting) {
		t.Fatalf("resume after the end: %v", err)
	}
}

// TestVeraCryptCrashAnywhere stops a re-encryption after every number of
// writes it makes, tearing the write it stops in, then resumes it: the
// volume always ends with the data it had, under a new key; and whenever
// the stop came before the re-encryption was recorded, the volume opens
// as it was.
func TestVeraCryptCrashAnywhere(t *testing.T) {
	base, sum := newVeraCrypt(t, 1<<20, vcCreds, tcrypt.CreateOptions{Encryption: "Twofish"})
	_, key0, _ := sumOf(t, base, vcCreds, volume.Options{})
	const chunk = 64 << 10
	countDev := openDev(t, testdata.CopyFile(t, base))
	count := &crashDevice{Device: countDev, allowed: 1 << 30}
	r, err := Start(context.Background(), count, nil, vcCreds, Options{Encryption: "AES"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), r, RunOptions{Chunk: chunk}); err != nil {
		t.Fatal(err)
	}
	countDev.Close()
	total := count.done
	if total < 20 {
		t.Fatalf("only %d writes in a run of several chunks", total)
	}
	step := 1
	resumed := 0
	defer func() {
		// Most stops fall inside the re-encryption proper.
		if resumed < total/(2*step) {
			t.Errorf("only %d of the %d stops left a re-encryption to resume", resumed, total)
		}
	}()
	for k := 0; k < total; k++ {
		t.Run(fmt.Sprintf("after-%d-of-%d", k, total), func(t *testing.T) {
			p := testdata.CopyFile(t, base)
			dev := openDev(t, p)
			cd := &crashDevice{Device: dev, allowed: k}
			r, err := Start(context.Background(), cd, nil, vcCreds, Options{Encryption: "AES"})
			if err == nil {
				err = Run(context.Background(), r, RunOptions{Chunk: chunk})
			}
			dev.Close()
			if !errors.Is(err, errCrash) {
				t.Fatalf("got %v, want the simulated crash", err)
			}
			// An ordinary open either works (nothing was recorded yet, or
			// the new header was written) or says the re-encryption must
			// be completed.
			got, key, err := sumOf(t, p, vcCreds, volume.Options{})
			switch {
			case err == nil:
				if got != sum {
					t.Fatalf("the volume opens (old key: %v) with other data", bytes.Equal(key, key0))
				}
				return
			case !errors.Is(err, volume.ErrReencrypting):
				t.Fatalf("ordinary open: %v", err)
			}
			resumed++
			dev = openDev(t, p)
			r, err = Resume(context.Background(), dev, nil, vcCreds, volume.Options{})
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			if err := Run(context.Background(), r, RunOptions{Chunk: chunk}); err != nil {
				t.Fatalf("resumed run: %v", err)
			}
			dev.Close()
			got, key, err = sumOf(t, p, vcCreds, volume.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got != sum {
				t.Fatal("the data differs after the resumed re-encryption")
			}
			if bytes.Equal(key, key0) {
				t.Fatal("the old key still opens it")
			}
		})
	}
}
