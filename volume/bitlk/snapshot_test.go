package bitlk

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// TestSnapshotReopen keeps the unlock of BitLocker volumes made by Windows
// (every mode, both sector sizes, To Go) and reopens them from the encoded
// snapshot without the credentials, as the raw-file helper process and
// the agent do: the reopened volume reads what the unlocked one read
// (sampled at every segment's ends), writes land where a reopen with the
// credentials reads them, and a copy of the file or a changed metadata
// block is refused while a changed data sector is not.
func TestSnapshotReopen(t *testing.T) {
	short := map[string]bool{
		"bitlk-aes-xts-128-startup-key": true, // no key stretch
		"bitlk-aes-cbc-128-4k":          true,
		"bitlk-aes-cbc-elephant-256":    true,
	}
	for _, im := range testdata.BitLockerImages(t) {
		if im.SHA256 == "" {
			continue // refused volumes: nothing to keep
		}
		t.Run(im.Name, func(t *testing.T) {
			if testing.Short() && !short[im.Name] {
				t.Skip("a key stretch per image: run without -short")
			}
			creds := cheapestCredentials(im)
			p := testdata.CopyFile(t, im.Path)
			os.Chmod(p, 0o644)
			m := metadataOf(t, p)
			v, err := volume.OpenWith(context.Background(), p, creds, volume.Options{Type: "bitlk"})
			if err != nil {
				t.Fatal(err)
			}
			want := sampleHash(t, v, m)
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

			r, err := volume.Reopen(context.Background(), p, &back, volume.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := sampleHash(t, r, m); got != want {
				t.Fatalf("the reopened volume reads other data: sample %s, want %s", got, want)
			}
			// A write at the start (the relocated first sectors) and one
			// in the last data segment, through the reopened volume.
			segs, _ := m.segments(r.Size())
			last := segs[len(segs)-1]
			data := make([]byte, 8192)
			rand.Read(data)
			offs := []int64{4096, last.Offset + last.Size/2}
			for _, off := range offs {
				if _, err := r.WriteAt(data, off); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			w, err := volume.OpenWith(context.Background(), p, creds, volume.Options{Type: "bitlk", ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(data))
			for _, off := range offs {
				if _, err := w.ReadAt(got, off); err != nil || !bytes.Equal(got, data) {
					t.Fatalf("at %d, opened with the credentials: %v, the data written through the reopened volume is not there", off, err)
				}
			}
			w.Close()

			// The writes changed data sectors only: the same volume.
			if r, err := volume.Reopen(context.Background(), p, &back, volume.Options{ReadOnly: true}); err != nil {
				t.Fatalf("after writing files: %v", err)
			} else {
				r.Close()
			}
			if _, err := volume.Reopen(context.Background(), testdata.CopyFile(t, p), &back, volume.Options{ReadOnly: true}); !errors.Is(err, volume.ErrNotSameVolume) {
				t.Fatalf("a copy: %v, want ErrNotSameVolume", err)
			}
			// A metadata block rewritten (as a new protector would).
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			at := int64(m.MetadataOffsets[len(m.MetadataOffsets)-1]) + 200
			one := []byte{0}
			f.ReadAt(one, at)
			one[0] ^= 0xff
			f.WriteAt(one, at)
			f.Close()
			if _, err := volume.Reopen(context.Background(), p, &back, volume.Options{ReadOnly: true}); !errors.Is(err, volume.ErrNotSameVolume) {
				t.Fatalf("after a metadata block changed: %v, want ErrNotSameVolume", err)
			}
		})
	}
}

// cheapestCredentials picks the protector that costs no key stretch where
// the image has one.
func cheapestCredentials(im testdata.BitLockerImage) volume.Credentials {
	switch {
	case im.ClearKeyVMK != "":
		return volume.Credentials{}
	case im.StartupKey != "":
		return volume.Credentials{StartupKey: im.StartupKey}
	case im.Password != "":
		return volume.Credentials{Password: []byte(im.Password)}
	}
	return volume.Credentials{Password: []byte(im.Recovery)}
}
