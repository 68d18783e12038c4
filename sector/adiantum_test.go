package sector

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/cryptvol/cryptvol/ciphers/adiantum"
)

// TestAdiantumTweaks: sector n of a run is the Adiantum message with
// dm-crypt's IV for n as its tweak (plain64: n little-endian in the first
// 8 of 32 bytes; plain: its low 32 bits; plain64be: big-endian in the
// last 8), n counted in 512-byte units through Stride as LUKS2 does, for
// runs longer than a chunk, split over workers, in place.
func TestAdiantumTweaks(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	key := make([]byte, adiantum.KeySize)
	for i := range key {
		key[i] = byte(rng.Uint32())
	}
	tweakOf := map[StandardIV]func(n uint64) []byte{
		IVPlain64: func(n uint64) []byte {
			tw := make([]byte, 32)
			binary.LittleEndian.PutUint64(tw, n)
			return tw
		},
		IVPlain: func(n uint64) []byte {
			tw := make([]byte, 32)
			binary.LittleEndian.PutUint32(tw, uint32(n))
			return tw
		},
		IVPlain64BE: func(n uint64) []byte {
			tw := make([]byte, 32)
			binary.BigEndian.PutUint64(tw[24:], n)
			return tw
		},
	}
	for _, rounds := range []int{12, 20} {
		c, err := adiantum.New(key, rounds)
		if err != nil {
			t.Fatal(err)
		}
		for iv, tweakOfIV := range tweakOf {
			for _, ss := range []int{512, 4096} {
				// LUKS2 numbers IVs in 512-byte units: stride 8 for 4096.
				stride := uint64(ss / 512)
				tweak := func(n uint64) []byte { return tweakOfIV(n * stride) }
				m, err := NewAdiantum(c, Stride(iv, stride), ss)
				if err != nil {
					t.Fatal(err)
				}
				n := 2*sectorsPerChunk(ss) + 5
				src := make([]byte, n*ss)
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				first := uint64(1)<<32 - 3 // plain wraps here
				want := make([]byte, len(src))
				for i := 0; i < n; i++ {
					c.Encrypt(want[i*ss:(i+1)*ss], src[i*ss:(i+1)*ss], tweak(first+uint64(i)))
				}
				for _, mode := range []Mode{m, Parallel(m, 3)} {
					got := bytes.Clone(src)
					mode.Encrypt(got, got, first)
					if !bytes.Equal(got, want) {
						t.Fatalf("XChaCha%d, %v, %d-byte sectors: differs from one Adiantum message per sector", rounds, iv, ss)
					}
					mode.Decrypt(got, got, first)
					if !bytes.Equal(got, src) {
						t.Fatalf("XChaCha%d, %v, %d-byte sectors: no round trip", rounds, iv, ss)
					}
				}
			}
		}
	}
}

func TestAdiantumBadParams(t *testing.T) {
	c, _ := adiantum.New(make([]byte, 32), 12)
	if _, err := NewAdiantum(c, IVBenbi, 4096); err == nil {
		t.Error("benbi accepted")
	}
	if _, err := NewAdiantum(c, IVPlain64, 8192); err == nil {
		t.Error("8192-byte sectors accepted")
	}
	if _, err := NewAdiantum(c, IVPlain64, 520); err == nil {
		t.Error("520-byte sectors accepted")
	}
	if _, err := NewAdiantum(nil, IVPlain64, 512); err == nil {
		t.Error("nil cipher accepted")
	}
}
