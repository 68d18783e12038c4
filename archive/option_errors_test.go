package archive

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestCreateRefusesArgon2CostsAsInvalidOption: Argon2 costs outside the
// format's ranges are ErrInvalidOption with their messages unchanged; a
// path that cannot be created is not.
func TestCreateRefusesArgon2CostsAsInvalidOption(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cred := Credentials{Password: []byte("pass")}
	for _, c := range []struct {
		p   Argon2Params
		msg string
	}{
		{Argon2Params{MemoryKiB: 64, Passes: 1, Lanes: 0}, "archive: argon2 lanes 0: want 1 to 64"},
		{Argon2Params{MemoryKiB: 64, Passes: 0, Lanes: 1}, "archive: argon2 passes 0: want 1 to 64"},
		{Argon2Params{MemoryKiB: 1, Passes: 1, Lanes: 4}, "archive: argon2 memory 1 KiB: want 32 KiB (8 per lane) to 4 GiB"},
	} {
		_, err := Create(ctx, filepath.Join(dir, "a.cva"), cred, &CreateOptions{Argon2: c.p})
		if err == nil || err.Error() != c.msg || !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%+v: %v, want %q as an option error", c.p, err, c.msg)
		}
	}
	cheap := &CreateOptions{Argon2: Argon2Params{MemoryKiB: 64, Passes: 1, Lanes: 1}}
	_, err := Create(ctx, filepath.Join(dir, "missing", "a.cva"), cred, cheap)
	if err == nil || errors.Is(err, ErrInvalidOption) {
		t.Errorf("a path in a missing directory: %v, want an error that is not an option error", err)
	}
}
