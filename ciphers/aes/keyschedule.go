package aes

import "encoding/binary"

// maxRounds is the number of rounds of AES-256; the round-key arrays are sized
// for it so a Cipher is one fixed-size value.
const maxRounds = 14

// roundKeys holds up to 15 round keys as 16-byte strings in FIPS-197 byte
// order, the layout AESENC/AESE and VAESENC load directly.
type roundKeys [(maxRounds + 1) * 16]byte

// expandKey is the FIPS-197 section 5.2 KeyExpansion. It fills enc with the
// encryption round keys and dec with the round keys of the "equivalent inverse
// cipher" (section 5.3.5: reversed order, InvMixColumns applied to the inner
// ones), which is what AESDEC (x86) and AESD+AESIMC (arm64) expect. It returns
// the number of rounds. len(key) must be 16, 24 or 32.
func expandKey(key []byte, enc, dec *roundKeys) int {
	nk := len(key) / 4
	nr := nk + 6
	var w [4 * (maxRounds + 1)]uint32
	for i := 0; i < nk; i++ {
		w[i] = binary.BigEndian.Uint32(key[4*i:])
	}
	rcon := uint32(1)
	for i := nk; i < 4*(nr+1); i++ {
		t := w[i-1]
		switch {
		case i%nk == 0:
			t = subWord(t<<8|t>>24) ^ rcon<<24
			rcon = uint32(xtime(byte(rcon)))
		case nk > 6 && i%nk == 4:
			t = subWord(t)
		}
		w[i] = w[i-nk] ^ t
	}
	for i := 0; i < 4*(nr+1); i++ {
		binary.BigEndian.PutUint32(enc[4*i:], w[i])
	}
	for r := 0; r <= nr; r++ {
		src := enc[16*(nr-r) : 16*(nr-r)+16]
		dst := dec[16*r : 16*r+16]
		copy(dst, src)
		if r != 0 && r != nr {
			for c := 0; c < 4; c++ {
				invMixColumn(dst[4*c : 4*c+4])
			}
		}
	}
	for i := range w {
		w[i] = 0
	}
	return nr
}

// subWord applies the S-box to each byte of a key-schedule word.
func subWord(x uint32) uint32 {
	return uint32(sbox(byte(x>>24)))<<24 | uint32(sbox(byte(x>>16)))<<16 |
		uint32(sbox(byte(x>>8)))<<8 | uint32(sbox(byte(x)))
}

// xtime multiplies by x in GF(2^8) modulo x^8+x^4+x^3+x+1 without branches.
func xtime(b byte) byte {
	return b<<1 ^ 0x1b&-(b>>7)
}

// gfMul multiplies in GF(2^8) in constant time (no data-dependent branches
// or indices), so key expansion leaks no key bits through timing.
func gfMul(a, b byte) byte {
	var p byte
	for i := 0; i < 8; i++ {
		p ^= a & -(b & 1)
		b >>= 1
		a = xtime(a)
	}
	return p
}

// sbox computes SubBytes for one byte from its definition (FIPS-197 5.1.1):
// the multiplicative inverse (as a^254) followed by the affine map. It is
// slow but table-free; only the key schedule uses it.
func sbox(a byte) byte {
	inv := byte(1)
	for bit := 7; bit >= 0; bit-- {
		inv = gfMul(inv, inv)
		if (254>>bit)&1 == 1 { // public exponent bits, not data
			inv = gfMul(inv, a)
		}
	}
	rotl := func(x byte, n uint) byte { return x<<n | x>>(8-n) }
	return inv ^ rotl(inv, 1) ^ rotl(inv, 2) ^ rotl(inv, 3) ^ rotl(inv, 4) ^ 0x63
}

// invMixColumn applies InvMixColumns (FIPS-197 5.3.3) to one 4-byte column.
func invMixColumn(c []byte) {
	a0, a1, a2, a3 := c[0], c[1], c[2], c[3]
	c[0] = gfMul(a0, 14) ^ gfMul(a1, 11) ^ gfMul(a2, 13) ^ gfMul(a3, 9)
	c[1] = gfMul(a0, 9) ^ gfMul(a1, 14) ^ gfMul(a2, 11) ^ gfMul(a3, 13)
	c[2] = gfMul(a0, 13) ^ gfMul(a1, 9) ^ gfMul(a2, 14) ^ gfMul(a3, 11)
	c[3] = gfMul(a0, 11) ^ gfMul(a1, 13) ^ gfMul(a2, 9) ^ gfMul(a3, 14)
}
