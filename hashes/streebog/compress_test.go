package streebog

import (
	"math/rand/v2"
	"testing"
)

// TestCompressMatchesGeneric checks the dispatched g_N (assembly on
// amd64) against the generic Go one on random chaining values, blocks and
// counters; the RFC and HMAC vectors check the generic one.
func TestCompressMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var h, m [8]uint64
		for j := range h {
			h[j], m[j] = r.Uint64(), r.Uint64()
		}
		n := r.Uint64()
		if i%4 == 0 {
			n = 0
		}
		want, got := h, h
		compressGeneric(&want, &m, n)
		compress(&got, &m, n)
		if got != want {
			t.Fatalf("g_N(%x, %x, %d) = %x, want %x", h, m, n, got, want)
		}
	}
}

// BenchmarkCompress compares the dispatched g_N with the generic Go one.
func BenchmarkCompress(b *testing.B) {
	var h, m [8]uint64
	b.Run("dispatched", func(b *testing.B) {
		for range b.N {
			compress(&h, &m, 512)
		}
	})
	b.Run("generic", func(b *testing.B) {
		for range b.N {
			compressGeneric(&h, &m, 512)
		}
	})
}
