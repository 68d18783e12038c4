package whirlpool

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestBlockMatchesGeneric checks the dispatched compression function
// (assembly on amd64), blockWords and every kernel this CPU can run
// against the generic Go one on random
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
			m[j] = binary.BigEndian.Uint64(p[8*j:])
		}
		want = h
		blockGeneric(&want, p[:BlockSize])
		for _, k := range kernels() {
			got := h
			k.f(&got, &m)
			if got != want {
				t.Fatalf("%s(%x, %x) = %x, want %x", k.name, h, m, got, want)
			}
		}
		// Compress2: the pair is (h, m) and (m, h).
		want2 := m
		genericWords(&want2, &h)
		got1, got2 := h, m
		Compress2(&got1, &m, &got2, &h)
		if got1 != want || got2 != want2 {
			t.Fatalf("Compress2(%x, %x) = %x, %x, want %x, %x", h, m, got1, got2, want, want2)
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

// BenchmarkCompress2 is two independent compressions at once, per
// compression.
func BenchmarkCompress2(b *testing.B) {
	var h1, m1, h2, m2 [8]uint64
	for range b.N / 2 {
		Compress2(&h1, &m1, &h2, &m2)
	}
}

// BenchmarkBlock compares the compression functions this CPU can run.
func BenchmarkBlock(b *testing.B) {
	var h, m [8]uint64
	for _, k := range kernels() {
		b.Run(k.name, func(b *testing.B) {
			for range b.N {
				k.f(&h, &m)
			}
		})
	}
}

// genericWords is blockGeneric on a block given as words.
func genericWords(h, m *[8]uint64) {
	var p [BlockSize]byte
	for i, v := range m {
		binary.BigEndian.PutUint64(p[8*i:], v)
	}
	blockGeneric(h, p[:])
}
