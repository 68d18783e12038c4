//go:build amd64 && !purego

package whirlpool

import (
	"math/rand/v2"
	"testing"
)

// TestBlockAsm2MatchesBlockAsm checks the two-chain table kernel against
// two single ones on random chaining values and blocks, whatever kernel
// blockWords2 dispatches to on this CPU.
func TestBlockAsm2MatchesBlockAsm(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		var h1, m1, h2, m2 [8]uint64
		for j := range h1 {
			h1[j], m1[j], h2[j], m2[j] = r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()
		}
		want1, want2 := h1, h2
		blockAsm(&want1, &m1)
		blockAsm(&want2, &m2)
		got1, got2 := h1, h2
		blockAsm2(&got1, &m1, &got2, &m2)
		if got1 != want1 || got2 != want2 {
			t.Fatalf("blockAsm2(%x, %x, %x, %x) = %x, %x, want %x, %x", h1, m1, h2, m2, got1, got2, want1, want2)
		}
	}
}

// BenchmarkBlockTables2 is the two-chain table kernel, per compression:
// to set beside BenchmarkBlock/tables.
func BenchmarkBlockTables2(b *testing.B) {
	var h1, m1, h2, m2 [8]uint64
	for range b.N / 2 {
		blockAsm2(&h1, &m1, &h2, &m2)
	}
}
