package luks

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
)

// failingDevice is a device whose writes fail, as a disk that returns
// I/O errors.
type failingDevice struct{ size int64 }

func (d failingDevice) Size() int64                             { return d.size }
func (d failingDevice) Sync() error                             { return nil }
func (d failingDevice) ReadAt(p []byte, off int64) (int, error) { return 0, io.ErrUnexpectedEOF }
func (d failingDevice) WriteAt(p []byte, off int64) (int, error) {
	return 0, errors.New("input/output error")
}

// TestRefusedOptionsAreInvalidOption: every option Create and AddKey
// refuse is volume.ErrInvalidOption, with its message unchanged; a device
// that cannot be written is not.
func TestRefusedOptionsAreInvalidOption(t *testing.T) {
	ctx := context.Background()
	dev := failingDevice{size: 32 << 20}
	for _, c := range []struct {
		o   CreateOptions
		msg string
	}{
		{CreateOptions{Type: "luks3"}, `unknown LUKS type "luks3" (want luks1 or luks2)`},
		{CreateOptions{SectorSize: 3000}, `sector size 3000: want 512, 1024, 2048 or 4096`},
		{CreateOptions{Type: "luks1", KDF: KDFOptions{PBKDF: "argon2id"}}, `LUKS1 keyslots use PBKDF2 only, not argon2id`},
		{CreateOptions{KDF: KDFOptions{PBKDF: "foo"}}, `unknown --pbkdf "foo" (want pbkdf2, argon2i or argon2id)`},
		{CreateOptions{KDF: KDFOptions{PBKDF: "pbkdf2", Iterations: 10}}, `PBKDF2 iterations 10 below cryptsetup's minimum 1000`},
		{CreateOptions{KDF: KDFOptions{PBKDF: "argon2id", MemoryKiB: 1}}, `--pbkdf-memory 1 KiB outside cryptsetup's 32..4194304`},
		{CreateOptions{KeySize: 255}, `key size 255 bits is not a whole number of bytes`},
	} {
		_, err := Create(ctx, dev, c.o, pw("pass"))
		if err == nil || err.Error() != c.msg || !errors.Is(err, volume.ErrInvalidOption) {
			t.Errorf("%+v: %v (option error: %v), want %q as an option error", c.o, err, errors.Is(err, volume.ErrInvalidOption), c.msg)
		}
	}
	if _, err := Create(ctx, dev, CreateOptions{}, volume.Credentials{Password: []byte("p"), KeyfileSize: 3}); err == nil || !errors.Is(err, volume.ErrInvalidOption) {
		t.Errorf("--keyfile-size without a key file: %v, want an option error", err)
	}

	// Good options on a device that cannot be written: an I/O error.
	_, err := Create(ctx, dev, CreateOptions{KDF: fastKDF("pbkdf2"), Quick: true}, pw("pass"))
	if err == nil || errors.Is(err, volume.ErrInvalidOption) {
		t.Errorf("write failure: %v, want an error that is not an option error", err)
	}

	// AddKey: a keyslot number out of range.
	_, img := newImage(t, 20<<20)
	if _, err := Create(ctx, img, CreateOptions{KDF: fastKDF("pbkdf2"), Quick: true}, pw("pass")); err != nil {
		t.Fatal(err)
	}
	slot := 40
	_, err = AddKey(ctx, img, pw("pass"), []byte("new"), KeyslotOptions{Slot: &slot, KDF: fastKDF("pbkdf2")})
	if err == nil || err.Error() != "keyslot 40 out of range 0..31" || !errors.Is(err, volume.ErrInvalidOption) {
		t.Errorf("slot 40: %v, want an option error", err)
	}
}
