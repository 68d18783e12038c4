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
		// Compress2: the pair is (h, m) and (m, h).
		want2 := m
		compressGeneric(&want2, &h, n)
		got1, got2 := h, m
		Compress2(&got1, &m, &got2, &h, n)
		if got1 != want || got2 != want2 {
			t.Fatalf("Compress2(%x, %x, %d) = %x, %x, want %x, %x", h, m, n, got1, got2, want, want2)
		}
	}
}

// BenchmarkCompress2 is two independent g_N at once, per g_N.
func BenchmarkCompress2(b *testing.B) {
	var h1, m1, h2, m2 [8]uint64
	for range b.N / 2 {
		Compress2(&h1, &m1, &h2, &m2, 512)
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
