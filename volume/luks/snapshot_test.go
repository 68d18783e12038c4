package luks

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// TestSnapshotReopen keeps the unlock of a LUKS1 and a LUKS2 image and
// reopens them without the passphrase; a copy is refused.
func TestSnapshotReopen(t *testing.T) {
	for _, file := range []string{"compatimage.img.xz", "compatimage2.img.xz"} {
		t.Run(file, func(t *testing.T) {
			p := testdata.CopyFile(t, testdata.Unpack(t, file))
			v, err := openFile(t, p, volume.Credentials{Password: []byte(compatPassphrase)}, volume.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, 64<<10)
			v.ReadAt(want, 0)
			s, err := v.Snapshot()
			v.Close()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := s.MarshalBinary()
			if bytes.Contains(b, []byte(compatPassphrase)) {
				t.Fatal("the snapshot holds the passphrase")
			}
			var back volume.Snapshot
			if err := back.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			r, err := volume.Reopen(context.Background(), p, &back, volume.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(want))
			r.ReadAt(got, 0)
			checkFAT(t, p, r)
			r.Close()
			if !bytes.Equal(got, want) {
				t.Fatal("the reopened volume reads other data")
			}
			if _, err := volume.Reopen(context.Background(), testdata.CopyFile(t, p), &back, volume.Options{ReadOnly: true}); !errors.Is(err, volume.ErrNotSameVolume) {
				t.Fatalf("a copy: %v", err)
			}
		})
	}
}
