package bitlk

import "math/bits"

// The key stretch is 2^21 SHA-256 compressions in one dependency chain,
// and the message of each round is known word by word: the previous
// digest, the initial digest, the salt, the round counter and fixed
// padding. So the chain runs on state and message words directly, with no
// byte buffers, padding or digest encoding per round (which cost as much
// as the compressions themselves through crypto/sha256's hash.Hash and
// Sum256 with SHA-NI). compress is FIPS 180-4's function; stretchChain
// picks an assembly version where there is one.

var sha256K = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

var sha256IV = [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}

// compress runs the SHA-256 compression function over the 16 message words
// m, updating h.
func compress(h *[8]uint32, m *[16]uint32) {
	var w [64]uint32
	copy(w[:16], m[:])
	for i := 16; i < 64; i++ {
		v1, v2 := w[i-2], w[i-15]
		s1 := bits.RotateLeft32(v1, -17) ^ bits.RotateLeft32(v1, -19) ^ v1>>10
		s0 := bits.RotateLeft32(v2, -7) ^ bits.RotateLeft32(v2, -18) ^ v2>>3
		w[i] = s1 + w[i-7] + s0 + w[i-16]
	}
	a, b, c, d, e, f, g, hh := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	for i := 0; i < 64; i++ {
		t1 := hh + (bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)) + ((e & f) ^ (^e & g)) + sha256K[i] + w[i]
		t2 := (bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)) + ((a & b) ^ (a & c) ^ (b & c))
		hh, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
	}
	h[0] += a
	h[1] += b
	h[2] += c
	h[3] += d
	h[4] += e
	h[5] += f
	h[6] += g
	h[7] += hh
}

// chainState is the key stretch in words: the 88-byte record as the two
// message blocks SHA-256 sees.
type chainState struct {
	last    [8]uint32  // the digest so far (the first 32 bytes)
	block1  [16]uint32 // last digest | initial digest
	block2  [16]uint32 // salt | counter | padding
	counter uint64
}

func newChainState(initial *[32]byte, salt *[16]byte) *chainState {
	s := &chainState{}
	for i := 0; i < 8; i++ {
		s.block1[8+i] = be32(initial[4*i:])
	}
	for i := 0; i < 4; i++ {
		s.block2[i] = be32(salt[4*i:])
	}
	// Bytes 80-87 of the record (16-23 of block 2) are the counter,
	// little-endian; then the 0x80 byte, zeros and the length in bits.
	s.block2[6] = 0x80000000
	s.block2[15] = 88 * 8
	return s
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// setCounter writes the round counter as SHA-256 reads it: the
// little-endian bytes of the 64-bit count, taken big-endian four at a time.
func (s *chainState) setCounter() {
	s.block2[4] = bits.ReverseBytes32(uint32(s.counter))
	s.block2[5] = bits.ReverseBytes32(uint32(s.counter >> 32))
}

// roundsGeneric runs n rounds of the chain in Go.
func (s *chainState) roundsGeneric(n uint64) {
	for ; n > 0; n-- {
		copy(s.block1[:8], s.last[:])
		s.setCounter()
		h := sha256IV
		compress(&h, &s.block1)
		compress(&h, &s.block2)
		s.last = h
		s.counter++
	}
}

func (s *chainState) digest() [32]byte {
	var d [32]byte
	for i, v := range s.last {
		d[4*i], d[4*i+1], d[4*i+2], d[4*i+3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	}
	return d
}

func (s *chainState) wipe() { *s = chainState{} }
