package fvault2

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// TestSnapshotReopen keeps the unlock of the FileVault 2 volume made by
// macOS and reopens it from the encoded snapshot without the passphrase
// (as `unlock` and the mount helper do): it reads the logical volume's
// first and last MiB as the README's sample hash says, and a copy of the
// file is refused.
func TestSnapshotReopen(t *testing.T) {
	p := testdata.CopyFile(t, smallImage(t))
	v, err := open(t, p, smallPassword)
	if err != nil {
		t.Fatal(err)
	}
	s, err := v.Snapshot()
	v.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.MarshalBinary()
	s.Wipe()
	if err != nil {
		t.Fatal(err)
	}
	var back volume.Snapshot
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	defer back.Wipe()
	r, err := volume.Reopen(context.Background(), p, &back, volume.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Info().Format != "fvault2" || r.Size() != smallSize {
		t.Fatalf("reopened as %+v, %d bytes", r.Info(), r.Size())
	}
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for _, off := range []int64{0, r.Size() - int64(len(buf))} {
		if _, err := r.ReadAt(buf, off); err != nil {
			t.Fatal(err)
		}
		h.Write(buf)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != smallSampleSHA256 {
		t.Fatalf("the reopened volume's sample sha256 %s, want %s", got, smallSampleSHA256)
	}
	if _, err := volume.Reopen(context.Background(), testdata.CopyFile(t, p), &back, volume.Options{ReadOnly: true}); !errors.Is(err, volume.ErrNotSameVolume) {
		t.Fatalf("a copy: %v, want ErrNotSameVolume", err)
	}
}
