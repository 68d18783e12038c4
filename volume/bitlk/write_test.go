package bitlk

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// TestWriteAndRevert writes through a BitLocker volume, reads it back,
// reopens it, then writes the original plaintext back: the image must be
// byte for byte the file Windows made (the modes are deterministic, so
// this proves every write went to the right place with the right key and
// IV), and its sha256 the one of images.conf.
func TestWriteAndRevert(t *testing.T) {
	cases := []struct {
		name string
		pick func(im testdata.BitLockerImage) volume.Credentials
	}{
		{"bitlk-aes-xts-128-startup-key", func(im testdata.BitLockerImage) volume.Credentials {
			return volume.Credentials{StartupKey: im.StartupKey}
		}},
		{"bitlk-aes-cbc-128-4k", passwordOf},
		{"bitlk-aes-cbc-elephant-128", passwordOf},
		{"bitlk-togo-aes-cbc-128", passwordOf},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.name != "bitlk-aes-xts-128-startup-key" {
				t.Skip("a key stretch and a whole-volume pass: run without -short")
			}
			im := corpusImage(t, tc.name)
			orig, err := os.ReadFile(im.Path)
			if err != nil {
				t.Fatal(err)
			}
			p := testdata.CopyFile(t, im.Path)
			os.Chmod(p, 0o644)
			creds := tc.pick(im)
			// Before the writable open: its lock refuses other opens.
			m := metadataOf(t, p)
			v, err := volume.OpenWith(t.Context(), p, creds, volume.Options{Type: "bitlk"})
			if err != nil {
				t.Fatal(err)
			}
			segs, _ := m.segments(v.Size())
			// One write per segment boundary (across it where the next
			// segment takes data), and one over the first sectors.
			type patch struct {
				off  int64
				old  []byte
				data []byte
			}
			var patches []patch
			add := func(off int64, n int) {
				old := make([]byte, n)
				if _, err := v.ReadAt(old, off); err != nil {
					t.Fatal(err)
				}
				data := make([]byte, n)
				rand.Read(data)
				for _, s := range segs {
					if s.Zero {
						lo, hi := max(s.Offset, off), min(s.Offset+s.Size, off+int64(n))
						if lo < hi {
							clear(data[lo-off : hi-off])
						}
					}
				}
				patches = append(patches, patch{off, old, data})
			}
			add(100, 5000) // inside the relocated first sectors
			for _, s := range segs[1:] {
				add(s.Offset-1500, 3000)
			}
			add(v.Size()-1400, 1400)
			for _, pt := range patches {
				if _, err := v.WriteAt(pt.data, pt.off); err != nil {
					t.Fatalf("write at %d: %v", pt.off, err)
				}
			}
			// Data into a metadata area is refused.
			if _, err := v.WriteAt([]byte{1}, m.MetadataOffsets[1]+10); !errors.Is(err, volume.ErrReserved) {
				t.Errorf("write into metadata block 2: %v, want ErrReserved", err)
			}
			v.Close()
			v, err = volume.OpenWith(t.Context(), p, creds, volume.Options{Type: "bitlk"})
			if err != nil {
				t.Fatalf("reopening after the writes: %v", err)
			}
			for _, pt := range patches {
				got := make([]byte, len(pt.data))
				if _, err := v.ReadAt(got, pt.off); err != nil || !bytes.Equal(got, pt.data) {
					t.Fatalf("read back at %d: %v", pt.off, err)
				}
			}
			for i := len(patches) - 1; i >= 0; i-- {
				if _, err := v.WriteAt(patches[i].old, patches[i].off); err != nil {
					t.Fatal(err)
				}
			}
			if !testing.Short() {
				h := sha256.New()
				io.Copy(h, io.NewSectionReader(v, 0, v.Size()))
				if got := hex.EncodeToString(h.Sum(nil)); got != im.SHA256 {
					t.Errorf("sha256 after reverting %s, want %s", got, im.SHA256)
				}
			}
			v.Close()
			now, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(now, orig) {
				for i := range now {
					if now[i] != orig[i] {
						t.Fatalf("the reverted image differs from the original from byte %d", i)
					}
				}
			}
		})
	}
}

func passwordOf(im testdata.BitLockerImage) volume.Credentials {
	return volume.Credentials{Password: []byte(im.Password)}
}
