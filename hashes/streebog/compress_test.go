package streebog

import (
	"math/rand/v2"
	"testing"
)

// TestCompressMatchesGeneric checks the dispatched g_N (assembly on
// amd64) and every kernel this CPU can run against the generic Go one on random chaining values, blocks and
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
		want := h
		compressGeneric(&want, &m, n)
		for _, k := range kernels() {
			got := h
			k.f(&got, &m, n)
			if got != want {
				t.Fatalf("%s g_N(%x, %x, %d) = %x, want %x", k.name, h, m, n, got, want)
			}
		}
	}
}

// BenchmarkCompress compares the g_N kernels this CPU can run.
func BenchmarkCompress(b *testing.B) {
	var h, m [8]uint64
	for _, k := range kernels() {
		b.Run(k.name, func(b *testing.B) {
			for range b.N {
				k.f(&h, &m, 512)
			}
		})
	}
}
