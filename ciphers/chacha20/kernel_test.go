package chacha20

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// withKernels runs f with the kernel chain set to ks (then the generic
// kernel for the tail), as if the CPU had only those.
func withKernels(t testing.TB, ks []kernel, f func()) {
	saved := kernels
	kernels = append(append([]kernel(nil), ks...), genericKernel)
	if ks[len(ks)-1].id == kernelGeneric {
		kernels = append([]kernel(nil), ks...)
	}
	defer func() { kernels = saved }()
	f()
}

// TestKernelsMatchGeneric runs every kernel this CPU supports, alone, on
// random states (counters near the 32-bit wrap included), round counts
// and lump counts, and compares dst and the advanced counter with the
// generic Go kernel's.
func TestKernelsMatchGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, k := range allKernels() {
		t.Run(k.name, func(t *testing.T) {
			for iter := 0; iter < 200; iter++ {
				var st [16]uint32
				for i := range st {
					st[i] = rng.Uint32()
				}
				if iter%5 == 0 {
					st[12] = -uint32(rng.IntN(40)) // wraps inside the run
				}
				rounds := []int{8, 12, 20}[iter%3]
				size := k.blocks * BlockSize
				n := size * (1 + rng.IntN(5))
				src := make([]byte, n)
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				want := make([]byte, n)
				ref := st
				xorGeneric(&ref, rounds, want, src)

				got := make([]byte, n)
				s := st
				k.xor(&s, rounds, got, src)
				if !bytes.Equal(got, want) {
					i := 0
					for got[i] == want[i] {
						i++
					}
					t.Fatalf("iteration %d (%d rounds, %d bytes): first difference at byte %d (block %d)", iter, rounds, n, i, i/64)
				}
				if s != ref {
					t.Fatalf("iteration %d: state after the run %x, want %x", iter, s, ref)
				}
				// In place.
				s = st
				k.xor(&s, rounds, src, src)
				if !bytes.Equal(src, want) {
					t.Fatalf("iteration %d: in place differs", iter)
				}
			}
		})
	}
}

// TestStreamsPerKernel: a Cipher and an XKey stream give the same bytes
// whatever kernels the CPU has, for lengths that end mid-lump and
// mid-block.
func TestStreamsPerKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	key := make([]byte, KeySize)
	nonce := make([]byte, XNonceSize)
	for i := range key {
		key[i] = byte(rng.Uint32())
	}
	for i := range nonce {
		nonce[i] = byte(rng.Uint32())
	}
	const n = 5000
	for _, rounds := range []int{8, 12, 20} {
		var want, wantX []byte
		withKernels(t, []kernel{genericKernel}, func() {
			want = streamBytes(t, key, nonce, rounds, n, rng)
			wantX = xkeyBytes(t, key, nonce, rounds, n)
		})
		for _, k := range allKernels() {
			withKernels(t, []kernel{k}, func() {
				if got := streamBytes(t, key, nonce, rounds, n, rng); !bytes.Equal(got, want) {
					t.Errorf("%s, %d rounds: Cipher stream differs from the generic kernel's", k.name, rounds)
				}
				if rounds == 8 {
					return
				}
				if got := xkeyBytes(t, key, nonce, rounds, n); !bytes.Equal(got, wantX) {
					t.Errorf("%s, %d rounds: XKey stream differs from the generic kernel's", k.name, rounds)
				}
			})
		}
	}
}

// streamBytes reads n key stream bytes of NewRounds in random pieces.
func streamBytes(t testing.TB, key, nonce []byte, rounds, n int, rng *rand.Rand) []byte {
	c, err := NewRounds(key, nonce, 7, rounds)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, n)
	for at := 0; at < n; {
		step := min(n-at, 1+rng.IntN(700))
		c.XORKeyStream(out[at:at+step], out[at:at+step])
		at += step
	}
	return out
}

// xkeyBytes is the XKey stream of nonce for n bytes, which must equal
// NewRounds's from counter 0.
func xkeyBytes(t testing.TB, key, nonce []byte, rounds, n int) []byte {
	if rounds == 8 {
		return nil
	}
	k, err := NewXKey(key, rounds)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, n)
	k.XORKeyStream(out, out, (*[XNonceSize]byte)(nonce))
	c, _ := NewRounds(key, nonce, 0, rounds)
	ref := make([]byte, n)
	c.XORKeyStream(ref, ref)
	if !bytes.Equal(out, ref) {
		t.Fatalf("%d rounds: XKey stream differs from NewRounds's at counter 0", rounds)
	}
	return out
}
