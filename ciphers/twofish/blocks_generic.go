package twofish

import (
	"encoding/binary"
	"math/bits"
)

// interleave2 selects the two-block round code: with two independent
// dependency chains the table loads of one block overlap the other's, which
// is worth about 1.6x on amd64. 32-bit machines do not have the registers
// for eight state words plus temporaries, so they run one block at a time.
const interleave2 = bits.UintSize == 64

func load4(b *[16]byte) (uint32, uint32, uint32, uint32) {
	return binary.LittleEndian.Uint32(b[0:4]), binary.LittleEndian.Uint32(b[4:8]),
		binary.LittleEndian.Uint32(b[8:12]), binary.LittleEndian.Uint32(b[12:16])
}

func store4(b *[16]byte, w0, w1, w2, w3 uint32) {
	binary.LittleEndian.PutUint32(b[0:4], w0)
	binary.LittleEndian.PutUint32(b[4:8], w1)
	binary.LittleEndian.PutUint32(b[8:12], w2)
	binary.LittleEndian.PutUint32(b[12:16], w3)
}

// pair splits a 32-byte chunk into its two blocks.
func pair(b *[32]byte) (*[16]byte, *[16]byte) {
	return (*[16]byte)(b[0:16]), (*[16]byte)(b[16:32])
}

// encryptBlocksGeneric is the portable ECB loop; len(dst) == len(src).
func encryptBlocksGeneric(c *Cipher, dst, src []byte) {
	if interleave2 {
		for len(src) >= 2*BlockSize && len(dst) >= 2*BlockSize {
			s0, s1 := pair((*[32]byte)(src))
			d0, d1 := pair((*[32]byte)(dst))
			w0, w1, w2, w3 := load4(s0)
			v0, v1, v2, v3 := load4(s1)
			w0, w1, w2, w3, v0, v1, v2, v3 = encryptWords2(c, w0, w1, w2, w3, v0, v1, v2, v3)
			store4(d0, w0, w1, w2, w3)
			store4(d1, v0, v1, v2, v3)
			src, dst = src[2*BlockSize:], dst[2*BlockSize:]
		}
	}
	for len(src) >= BlockSize && len(dst) >= BlockSize {
		w0, w1, w2, w3 := load4((*[16]byte)(src))
		w0, w1, w2, w3 = encryptWords(c, w0, w1, w2, w3)
		store4((*[16]byte)(dst), w0, w1, w2, w3)
		src, dst = src[BlockSize:], dst[BlockSize:]
	}
}

// decryptBlocksGeneric is the portable inverse of encryptBlocksGeneric.
func decryptBlocksGeneric(c *Cipher, dst, src []byte) {
	if interleave2 {
		for len(src) >= 2*BlockSize && len(dst) >= 2*BlockSize {
			s0, s1 := pair((*[32]byte)(src))
			d0, d1 := pair((*[32]byte)(dst))
			w0, w1, w2, w3 := load4(s0)
			v0, v1, v2, v3 := load4(s1)
			w0, w1, w2, w3, v0, v1, v2, v3 = decryptWords2(c, w0, w1, w2, w3, v0, v1, v2, v3)
			store4(d0, w0, w1, w2, w3)
			store4(d1, v0, v1, v2, v3)
			src, dst = src[2*BlockSize:], dst[2*BlockSize:]
		}
	}
	for len(src) >= BlockSize && len(dst) >= BlockSize {
		w0, w1, w2, w3 := load4((*[16]byte)(src))
		w0, w1, w2, w3 = decryptWords(c, w0, w1, w2, w3)
		store4((*[16]byte)(dst), w0, w1, w2, w3)
		src, dst = src[BlockSize:], dst[BlockSize:]
	}
}
