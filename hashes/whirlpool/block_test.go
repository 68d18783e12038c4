package whirlpool

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestBlockMatchesGeneric checks the dispatched compression function
// (assembly on amd64) and blockWords against the generic Go one on random
// chaining values and blocks; the NESSIE vectors check the generic one.
func TestBlockMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		var h, m [8]uint64
		var p [2 * BlockSize]byte
		for j := range h {
			h[j], m[j] = r.Uint64(), r.Uint64()
		}
		for j := range p {
			p[j] = byte(r.Uint32())
		}
		want, got := h, h
		blockGeneric(&want, p[:])
		block(&got, p[:])
		if got != want {
			t.Fatalf("block(%x, %x) = %x, want %x", h, p, got, want)
		}
		for j := range m {
			binary.BigEndian.PutUint64(p[8*j:], m[j])
		}
		want, got = h, h
		blockGeneric(&want, p[:BlockSize])
		blockWords(&got, &m)
		if got != want {
			t.Fatalf("blockWords(%x, %x) = %x, want %x", h, m, got, want)
		}
	}
}

// BenchmarkBlock compares the dispatched compression function with the
// generic Go one.
func BenchmarkBlock(b *testing.B) {
	var h [8]uint64
	var p [BlockSize]byte
	b.Run("dispatched", func(b *testing.B) {
		for range b.N {
			block(&h, p[:])
		}
	})
	b.Run("generic", func(b *testing.B) {
		for range b.N {
			blockGeneric(&h, p[:])
		}
	})
}
