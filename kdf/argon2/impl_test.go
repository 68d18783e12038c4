package argon2

import (
	"math/rand/v2"
	"testing"
)

// forEachImpl runs f with the assembly compression function (where this
// CPU has it) and with the generic Go one.
func forEachImpl(t *testing.T, f func(t *testing.T)) {
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	if saved {
		useAVX2 = true
		t.Run("avx2", f)
	}
	useAVX2 = false
	t.Run("generic", f)
}

// TestProcessBlockImplementationsAgree compares the assembly G with the
// generic one on random blocks, with and without the xor of later passes,
// and with out aliasing x or y as the address generator does.
func TestProcessBlockImplementationsAgree(t *testing.T) {
	if !useAVX2 {
		t.Skip("no assembly implementation on this CPU/architecture")
	}
	defer func(saved bool) { useAVX2 = saved }(useAVX2)
	rng := rand.New(rand.NewPCG(5, 6))
	fill := func(b *block) {
		for i := range b {
			b[i] = rng.Uint64()
		}
	}
	for trial := 0; trial < 200; trial++ {
		var x, y, out0 block
		fill(&x)
		fill(&y)
		fill(&out0)
		xor := trial%2 == 1
		run := func(avx bool, alias int) block {
			useAVX2 = avx
			xx, yy, out := x, y, out0
			switch alias {
			case 1:
				out = xx
				processBlock(&out, &out, &yy, xor)
			case 2:
				out = yy
				processBlock(&out, &xx, &out, xor)
			default:
				processBlock(&out, &xx, &yy, xor)
			}
			return out
		}
		for alias := 0; alias < 3; alias++ {
			if a, g := run(true, alias), run(false, alias); a != g {
				t.Fatalf("trial %d alias %d xor %v: assembly and generic G differ", trial, alias, xor)
			}
		}
	}
}
