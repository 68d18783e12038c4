package adiantum

import (
	"encoding/binary"
	"math/bits"
)

// Poly1305 as Adiantum uses it: the ε-almost-Δ-universal hash of RFC 8439
// section 2.5 without the final addition of s, so with a key that is only
// r. Messages are whole 16-byte blocks, each with the 2^128 bit set. The
// arithmetic is on 64-bit limbs with math/bits, whose Mul64 and Add64 are
// branch-free on every architecture, and the final reduction selects with
// a mask, so the time depends only on the number of blocks.

// polyKey is r, clamped, as two 64-bit limbs.
type polyKey struct{ r0, r1 uint64 }

// newPolyKey reads and clamps r (RFC 8439 section 2.5.1).
func newPolyKey(b []byte) polyKey {
	return polyKey{
		r0: binary.LittleEndian.Uint64(b[0:8]) & 0x0ffffffc0fffffff,
		r1: binary.LittleEndian.Uint64(b[8:16]) & 0x0ffffffc0ffffffc,
	}
}

// polyState is the accumulator h < 2^130 + a little, in three limbs.
type polyState struct{ h0, h1, h2 uint64 }

// blocks absorbs len(msg)/16 blocks: h = (h + block + 2^128) * r mod
// 2^130 - 5, partially reduced.
func (s *polyState) blocks(k *polyKey, msg []byte) {
	h0, h1, h2 := s.h0, s.h1, s.h2
	r0, r1 := k.r0, k.r1
	for len(msg) >= 16 {
		var c uint64
		h0, c = bits.Add64(h0, binary.LittleEndian.Uint64(msg[0:8]), 0)
		h1, c = bits.Add64(h1, binary.LittleEndian.Uint64(msg[8:16]), c)
		h2 += c + 1
		h0, h1, h2 = mulR(h0, h1, h2, r0, r1)
		msg = msg[16:]
	}
	s.h0, s.h1, s.h2 = h0, h1, h2
}

// words absorbs an NH value: 32 bytes as four little-endian 64-bit words,
// the two blocks w[0] + w[1]<<64 and w[2] + w[3]<<64.
func (s *polyState) words(k *polyKey, w *[4]uint64) {
	h0, h1, h2 := s.h0, s.h1, s.h2
	for i := 0; i < 4; i += 2 {
		var c uint64
		h0, c = bits.Add64(h0, w[i], 0)
		h1, c = bits.Add64(h1, w[i+1], c)
		h2 += c + 1
		h0, h1, h2 = mulR(h0, h1, h2, k.r0, k.r1)
	}
	s.h0, s.h1, s.h2 = h0, h1, h2
}

// mulR returns h*r mod 2^130-5, partially reduced (below 2^130 + 2^66 or
// so). The clamping keeps r0, r1 < 2^60 and r1 a multiple of 4, which
// bounds every sum below.
func mulR(h0, h1, h2, r0, r1 uint64) (uint64, uint64, uint64) {
	// h*r as four limbs t0..t3 (h2 is small, so h2*r fits in 64 bits).
	m00h, m00l := bits.Mul64(h0, r0)
	m10h, m10l := bits.Mul64(h1, r0)
	m01h, m01l := bits.Mul64(h0, r1)
	m11h, m11l := bits.Mul64(h1, r1)
	m20 := h2 * r0
	m21 := h2 * r1

	t0 := m00l
	t1, c := bits.Add64(m00h, m10l, 0)
	t2, c2 := bits.Add64(m10h, m20, c)
	t1, c = bits.Add64(t1, m01l, 0)
	t2, c3 := bits.Add64(t2, m01h, c)
	t2, c4 := bits.Add64(t2, m11l, 0)
	t3 := m11h + m21 + c2 + c3 + c4

	// 2^130 = 5 mod p: fold t >> 130 back as 5*(t >> 130) = 4x + x, where
	// 4x is (t2, t3) with the low two bits of t2 cleared.
	h0, h1, h2 = t0, t1, t2&3
	cc0, cc1 := t2&^3, t3 // 4x
	h0, c = bits.Add64(h0, cc0, 0)
	h1, c = bits.Add64(h1, cc1, c)
	h2 += c
	cc0, cc1 = cc0>>2|cc1<<62, cc1>>2 // x
	h0, c = bits.Add64(h0, cc0, 0)
	h1, c = bits.Add64(h1, cc1, c)
	h2 += c
	return h0, h1, h2
}

// sum returns h mod 2^130-5, fully reduced, truncated to 128 bits: the
// hash value as a little-endian 128-bit number (lo, hi).
func (s *polyState) sum() (lo, hi uint64) {
	h0, h1, h2 := s.h0, s.h1, s.h2
	// h < 2^131 or so after the partial reductions; one more fold brings
	// it below 2^130 + 5, then subtract p once if it is at least p.
	x := h2 >> 2
	h2 &= 3
	var c uint64
	h0, c = bits.Add64(h0, x*5, 0)
	h1, c = bits.Add64(h1, 0, c)
	h2 += c
	g0, c := bits.Add64(h0, 5, 0)
	g1, c := bits.Add64(h1, 0, c)
	g2 := h2 + c
	// g = h + 5 - 2^130 when h >= p: then bit 130 of h + 5 is set.
	mask := -(g2 >> 2) // all ones when h >= p
	lo = h0&^mask | g0&mask
	hi = h1&^mask | g1&mask
	return lo, hi
}
