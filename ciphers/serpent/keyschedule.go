package serpent

import (
	"encoding/binary"
	"math/bits"
)

// phi is the fractional part of the golden ratio, the key schedule constant.
const phi = 0x9e3779b9

// expandKey computes the 33 round keys. A key shorter than 256 bits is
// padded with a single 1 bit just above its last bit, then zeros; in this
// byte order that is the byte 0x01 right after the key.
func expandKey(rk *[132]uint32, key []byte) {
	var padded [32]byte
	copy(padded[:], key)
	if len(key) < 32 {
		padded[len(key)] = 1
	}
	var w [140]uint32 // w[0..7] are the key words w_-8..w_-1
	for i := 0; i < 8; i++ {
		w[i] = binary.LittleEndian.Uint32(padded[4*i:])
	}
	for i := 8; i < 140; i++ {
		x := w[i-8] ^ w[i-5] ^ w[i-3] ^ w[i-1] ^ phi ^ uint32(i-8)
		w[i] = bits.RotateLeft32(x, 11)
	}
	// Round key i comes from S-box (3 - i) mod 8 applied to prekeys 4i..4i+3.
	for i := 0; i < 33; i++ {
		p := w[8+4*i:]
		var k [4]uint32
		k[0], k[1], k[2], k[3] = sboxForward[(3-i)&7](p[0], p[1], p[2], p[3])
		copy(rk[4*i:], k[:])
	}
	clear(padded[:])
	clear(w[:])
}
