//go:build amd64 && !purego

package streebog

import (
	"math/rand/v2"
	"testing"
)

// TestCompressAsm2MatchesCompressAsm checks the two-chain table kernel
// against two single ones on random chaining values, blocks and counters,
// whatever kernel compress2 dispatches to on this CPU.
func TestCompressAsm2MatchesCompressAsm(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		var h1, m1, h2, m2 [8]uint64
		for j := range h1 {
			h1[j], m1[j], h2[j], m2[j] = r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()
		}
		n := r.Uint64()
		if i%4 == 0 {
			n = 0
		}
		want1, want2 := h1, h2
		compressAsm(&want1, &m1, n)
		compressAsm(&want2, &m2, n)
		got1, got2 := h1, h2
		compressAsm2(&got1, &m1, &got2, &m2, n)
		if got1 != want1 || got2 != want2 {
			t.Fatalf("compressAsm2(%x, %x, %x, %x, %d) = %x, %x, want %x, %x", h1, m1, h2, m2, n, got1, got2, want1, want2)
		}
	}
}

// BenchmarkCompressTables2 is the two-chain table kernel, per g_N: to set
// beside BenchmarkCompress/tables.
func BenchmarkCompressTables2(b *testing.B) {
	var h1, m1, h2, m2 [8]uint64
	for range b.N / 2 {
		compressAsm2(&h1, &m1, &h2, &m2, 512)
	}
}
