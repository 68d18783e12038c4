package chacha20

import (
	"encoding/binary"
	"math/bits"
)

// permute runs rounds rounds (rounds/2 double rounds) of the ChaCha
// permutation over s in place, without the final addition.
func permute(s *[16]uint32, rounds int) {
	x0, x1, x2, x3 := s[0], s[1], s[2], s[3]
	x4, x5, x6, x7 := s[4], s[5], s[6], s[7]
	x8, x9, x10, x11 := s[8], s[9], s[10], s[11]
	x12, x13, x14, x15 := s[12], s[13], s[14], s[15]
	for i := 0; i < rounds; i += 2 {
		x0, x4, x8, x12 = quarterRound(x0, x4, x8, x12)
		x1, x5, x9, x13 = quarterRound(x1, x5, x9, x13)
		x2, x6, x10, x14 = quarterRound(x2, x6, x10, x14)
		x3, x7, x11, x15 = quarterRound(x3, x7, x11, x15)
		x0, x5, x10, x15 = quarterRound(x0, x5, x10, x15)
		x1, x6, x11, x12 = quarterRound(x1, x6, x11, x12)
		x2, x7, x8, x13 = quarterRound(x2, x7, x8, x13)
		x3, x4, x9, x14 = quarterRound(x3, x4, x9, x14)
	}
	s[0], s[1], s[2], s[3] = x0, x1, x2, x3
	s[4], s[5], s[6], s[7] = x4, x5, x6, x7
	s[8], s[9], s[10], s[11] = x8, x9, x10, x11
	s[12], s[13], s[14], s[15] = x12, x13, x14, x15
}

// quarterRound is RFC 8439 section 2.1.
func quarterRound(a, b, c, d uint32) (uint32, uint32, uint32, uint32) {
	a += b
	d = bits.RotateLeft32(d^a, 16)
	c += d
	b = bits.RotateLeft32(b^c, 12)
	a += b
	d = bits.RotateLeft32(d^a, 8)
	c += d
	b = bits.RotateLeft32(b^c, 7)
	return a, b, c, d
}

// xorGeneric is the generic kernel: one block per lump, in portable Go
// (little-endian words on every byte order).
func xorGeneric(state *[16]uint32, rounds int, dst, src []byte) {
	var x [16]uint32
	for len(src) >= BlockSize {
		x = *state
		permute(&x, rounds)
		for i := range x {
			w := x[i] + state[i]
			binary.LittleEndian.PutUint32(dst[4*i:], w^binary.LittleEndian.Uint32(src[4*i:]))
		}
		state[12]++
		dst, src = dst[BlockSize:], src[BlockSize:]
	}
	clear(x[:])
}
