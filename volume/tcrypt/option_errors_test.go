package tcrypt

import (
	"context"
	"errors"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
)

// TestRefusedOptionsAreInvalidOption: the options Create, CreateHidden
// and ConvertToVeraCrypt refuse are volume.ErrInvalidOption with their
// messages unchanged; a size too small is ErrTooSmall, not an option error.
func TestRefusedOptionsAreInvalidOption(t *testing.T) {
	ctx := context.Background()
	creds := volume.Credentials{Password: []byte("pass")}
	dev := newContainer(t, 2<<20)
	for _, c := range []struct {
		o   CreateOptions
		pim int
		msg string
	}{
		{CreateOptions{Encryption: "Foo"}, 0, `unknown or legacy encryption "Foo" (want one of ` + chainNames() + `)`},
		{CreateOptions{TrueCrypt: true, Encryption: "Camellia"}, 0, `TrueCrypt volumes cannot use Camellia (VeraCrypt only)`},
		{CreateOptions{Hash: "Foo"}, 0, `unknown hash "Foo" for new volumes (want SHA-512, Whirlpool, SHA-256, BLAKE2s-256, Streebog, RIPEMD-160 or argon2id)`},
		{CreateOptions{TrueCrypt: true}, 5, `TrueCrypt volumes have no PIM`},
		{CreateOptions{TrueCrypt: true, Hash: "argon2id"}, 0, `Argon2id is not available for TrueCrypt volumes`},
	} {
		cr := creds
		cr.PIM = c.pim
		_, err := Create(ctx, dev, cr, c.o)
		if err == nil || err.Error() != c.msg || !errors.Is(err, volume.ErrInvalidOption) {
			t.Errorf("%+v: %v (option error: %v), want %q as an option error", c.o, err, errors.Is(err, volume.ErrInvalidOption), c.msg)
		}
	}
	if _, err := CreateHidden(ctx, dev, creds, CreateOptions{}, 1000, 0); err == nil || !errors.Is(err, volume.ErrInvalidOption) {
		t.Errorf("hidden size 1000: %v, want an option error", err)
	}
	if _, err := Create(ctx, newContainer(t, 1000001), creds, CreateOptions{}); err == nil || err.Error() != "the size must be a multiple of 512 bytes (got 1000001)" || !errors.Is(err, volume.ErrInvalidOption) {
		t.Errorf("size 1000001: %v, want an option error", err)
	}
	if _, err := Create(ctx, newContainer(t, 64<<10), creds, CreateOptions{}); !errors.Is(err, ErrTooSmall) || errors.Is(err, volume.ErrInvalidOption) {
		t.Errorf("a 64 KiB container: %v, want ErrTooSmall only", err)
	}
}
