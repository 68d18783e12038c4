package tcrypt

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/volume"
)

// newContainer makes an empty container file of size bytes.
func newContainer(t testing.TB, size int64) *volume.FileDevice {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vol.hc")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, size); err != nil {
		t.Fatal(err)
	}
	d, err := volume.OpenDevice(p, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// writeRead writes random data over the whole volume through the volume
// API and returns it.
func writeAll(t testing.TB, v *volume.Volume) []byte {
	t.Helper()
	data := make([]byte, v.Size())
	rand.Read(data)
	// An unaligned write in the middle exercises read-modify-write.
	if _, err := v.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := v.WriteAt(data[1000:3333], 1000); err != nil {
		t.Fatal(err)
	}
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	return data
}

func readAll(t testing.TB, v *volume.Volume) []byte {
	t.Helper()
	got := make([]byte, v.Size())
	if _, err := v.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestCreateEveryChainAndPRF creates a volume for every chain × PRF (PIM 1
// keeps the derivations short), writes data, reopens it from the file with
// the password and reads the data back.
func TestCreateEveryChainAndPRF(t *testing.T) {
	prfs := []string{"SHA-512", "Whirlpool", "SHA-256", "BLAKE2s-256", "Streebog", "RIPEMD-160", "argon2id"}
	for _, c := range ciphers.Chains() {
		for _, prf := range prfs {
			c, prf := c, prf
			t.Run(c.Name+"/"+prf, func(t *testing.T) {
				dev := newContainer(t, 300<<10)
				creds := volume.Credentials{Password: []byte("pw " + c.Name), PIM: 1}
				cr, err := Create(context.Background(), dev, creds, CreateOptions{Encryption: c.Name, Hash: prf, Quick: true})
				if err != nil {
					t.Fatal(err)
				}
				v, err := volume.New(dev, cr.Unlocked, volume.Options{})
				if err != nil {
					t.Fatal(err)
				}
				data := writeAll(t, v)
				v.Close()
				rv, err := volume.OpenDeviceWith(context.Background(), dev, nil, creds, volume.Options{Hash: prf, ReadOnly: true})
				if err != nil {
					t.Fatalf("reopen: %v", err)
				}
				defer rv.Close()
				in := rv.Info()
				if in.Encryption != c.Name || in.Format != "veracrypt" || in.DataOffset != headerGroupSize {
					t.Fatalf("reopened as %+v", in)
				}
				if !bytes.Equal(readAll(t, rv), data) {
					t.Fatal("data read back differs")
				}
			})
		}
	}
}

// TestCreateDefaultsAndTrueCrypt covers the default PIM, keyfile-only
// volumes and the TrueCrypt format.
func TestCreateDefaultsAndTrueCrypt(t *testing.T) {
	kf := filepath.Join(t.TempDir(), "key")
	os.WriteFile(kf, []byte("some keyfile bytes"), 0o600)
	for _, tc := range []struct {
		name  string
		creds volume.Credentials
		o     CreateOptions
		hint  string
	}{
		{"veracrypt-default", volume.Credentials{Password: []byte("secret")}, CreateOptions{}, "SHA-512"},
		{"keyfile-only", volume.Credentials{Keyfiles: []string{kf}, PIM: 5}, CreateOptions{Hash: "SHA-256"}, "SHA-256"},
		{"pim", volume.Credentials{Password: []byte("secret"), PIM: 20}, CreateOptions{Hash: "Whirlpool"}, ""},
		{"truecrypt", volume.Credentials{Password: []byte("secret")}, CreateOptions{TrueCrypt: true, Hash: "RIPEMD-160", Encryption: "Twofish"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := newContainer(t, 400<<10)
			cr, err := Create(context.Background(), dev, tc.creds, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			v, _ := volume.New(dev, cr.Unlocked, volume.Options{})
			data := writeAll(t, v)
			v.Close()
			rv, err := volume.OpenDeviceWith(context.Background(), dev, nil, tc.creds, volume.Options{Hash: tc.hint, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer rv.Close()
			if !bytes.Equal(readAll(t, rv), data) {
				t.Fatal("data differs")
			}
			if tc.o.TrueCrypt && rv.Info().Format != "truecrypt" {
				t.Fatalf("format %q", rv.Info().Format)
			}
			// The filled data area never holds a plaintext sector: the
			// non-quick fill leaves no zero sector in the file either.
		})
	}
}

// TestCreateFillLeavesNoPlaintext checks that a non-quick creation writes
// ciphertext over the whole data area: no 512-byte sector of the file is
// zero, and a data sector does not decrypt to zeros with the real key.
func TestCreateFillLeavesNoPlaintext(t *testing.T) {
	dev := newContainer(t, 1<<20)
	var calls int
	cr, err := Create(context.Background(), dev, volume.Credentials{Password: []byte("x"), PIM: 1}, CreateOptions{Progress: func(done, total int64) { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Error("no progress reported")
	}
	raw, err := os.ReadFile(dev.Name())
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, 512)
	for off := 0; off < len(raw); off += 512 {
		if bytes.Equal(raw[off:off+512], zero) {
			t.Fatalf("sector at %d is all zeros", off)
		}
	}
	v, _ := volume.New(dev, cr.Unlocked, volume.Options{ReadOnly: true})
	defer v.Close()
	b := make([]byte, 512)
	v.ReadAt(b, 0)
	if bytes.Equal(b, zero) {
		t.Fatal("the fill used the volume's own key: data sectors decrypt to zeros")
	}
}

// TestCreateHiddenAndProtect makes an outer and a hidden volume, writes to
// both, and checks that opening the outer with hidden-volume protection
// refuses writes into the hidden area without changing anything.
func TestCreateHiddenAndProtect(t *testing.T) {
	dev := newContainer(t, 2<<20)
	outer := volume.Credentials{Password: []byte("outer"), PIM: 1}
	hidden := volume.Credentials{Password: []byte("hidden"), PIM: 1}
	cr, err := Create(context.Background(), dev, outer, CreateOptions{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	ov, _ := volume.New(dev, cr.Unlocked, volume.Options{})
	outerData := writeAll(t, ov)
	ov.Close()

	if _, err := CreateHidden(context.Background(), dev, hidden, CreateOptions{Quick: true}, 4<<20, headerGroupSize); !errors.Is(err, ErrNoRoom) {
		t.Fatalf("oversized hidden volume: %v", err)
	}
	hsize := int64(512 << 10)
	hc, err := CreateHidden(context.Background(), dev, hidden, CreateOptions{Quick: true, Encryption: "Serpent-AES"}, hsize, headerGroupSize)
	if err != nil {
		t.Fatal(err)
	}
	hv, _ := volume.New(dev, hc.Unlocked, volume.Options{})
	hiddenData := writeAll(t, hv)
	hv.Close()

	// Reopen both from the file.
	hv2, err := volume.OpenDeviceWith(context.Background(), dev, nil, hidden, volume.Options{Hidden: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !hv2.Info().Hidden || !bytes.Equal(readAll(t, hv2), hiddenData) {
		t.Fatal("hidden volume data differs")
	}
	hv2.Close()

	pv, err := volume.OpenDeviceWith(context.Background(), dev, nil, outer, volume.Options{ProtectHidden: &hidden})
	if err != nil {
		t.Fatal(err)
	}
	defer pv.Close()
	hiddenStart := pv.Size() - hsize - hiddenReservedEnd
	if _, err := pv.WriteAt([]byte("fine"), 0); err != nil {
		t.Fatalf("write in the outer free area: %v", err)
	}
	if _, err := pv.WriteAt(make([]byte, 4096), hiddenStart-1024); !errors.Is(err, volume.ErrProtected) {
		t.Fatalf("write over the hidden volume: %v", err)
	}
	// From then on the outer volume is read-only, as in TrueCrypt.
	if _, err := pv.WriteAt([]byte("late"), 0); !errors.Is(err, volume.ErrProtected) {
		t.Fatalf("write in the outer free area after the protection triggered: %v", err)
	}
	hv3, err := volume.OpenDeviceWith(context.Background(), dev, nil, hidden, volume.Options{Hidden: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer hv3.Close()
	if !bytes.Equal(readAll(t, hv3), hiddenData) {
		t.Fatal("protected write damaged the hidden volume")
	}
	_ = outerData
}

func TestCreateRefusesBadInput(t *testing.T) {
	dev := newContainer(t, 200<<10)
	if _, err := Create(context.Background(), dev, volume.Credentials{Password: []byte("x")}, CreateOptions{}); !errors.Is(err, ErrTooSmall) {
		t.Fatalf("tiny container: %v", err)
	}
	dev = newContainer(t, 400<<10)
	for _, o := range []CreateOptions{
		{Encryption: "Rot13"},
		{Hash: "md4"},
		{TrueCrypt: true, Encryption: "Camellia"},

		{TrueCrypt: true, Hash: "argon2id"},
	} {
		if _, err := Create(context.Background(), dev, volume.Credentials{Password: []byte("x")}, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
