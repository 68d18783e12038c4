package twofish

import "encoding/binary"

// EncryptXTS encrypts whole sectors in XTS mode (IEEE 1619). tweaks holds one
// already-encrypted initial tweak T0 (16 bytes) per sector; block j of a
// sector is masked with T0·α^j in GF(2^128). sectorSize must be a positive
// multiple of 16, len(src) must be len(tweaks)/16*sectorSize and
// len(dst) >= len(src); dst may be src. Sector sizes are multiples of the
// block size, so no ciphertext stealing is involved.
func (c *Cipher) EncryptXTS(dst, src, tweaks []byte, sectorSize int) {
	checkXTS(dst, src, tweaks, sectorSize)
	c.encryptXTS(dst[:len(src)], src, tweaks, sectorSize)
}

// DecryptXTS is the inverse of EncryptXTS, with the same rules.
func (c *Cipher) DecryptXTS(dst, src, tweaks []byte, sectorSize int) {
	checkXTS(dst, src, tweaks, sectorSize)
	c.decryptXTS(dst[:len(src)], src, tweaks, sectorSize)
}

func checkXTS(dst, src, tweaks []byte, sectorSize int) {
	if sectorSize <= 0 || sectorSize%BlockSize != 0 {
		panic("twofish: XTS sector size not a positive multiple of 16")
	}
	if len(tweaks)%BlockSize != 0 || len(src) != len(tweaks)/BlockSize*sectorSize {
		panic("twofish: XTS input does not match the number of tweaks")
	}
	if len(dst) < len(src) {
		panic("twofish: output smaller than input")
	}
}

// mulAlpha multiplies a tweak, held as the little-endian halves lo and hi,
// by α: a one-bit left shift of the 128-bit value with x^128 reduced to
// x^7+x^2+x+1 (0x87).
func mulAlpha(lo, hi uint64) (uint64, uint64) {
	carry := hi >> 63
	return lo<<1 ^ 0x87&-carry, hi<<1 | lo>>63
}

// xtsGeneric runs XTS with the portable round functions, the tweaks kept in
// registers and never written to memory. The length checks in the loop
// conditions are redundant after checkXTS; they let the compiler drop the
// bounds checks inside.
func xtsGeneric(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) {
	for len(tweaks) >= BlockSize {
		t := (*[BlockSize]byte)(tweaks)
		lo := binary.LittleEndian.Uint64(t[0:8])
		hi := binary.LittleEndian.Uint64(t[8:16])
		tweaks = tweaks[BlockSize:]
		n := sectorSize
		if interleave2 {
			for ; n >= 2*BlockSize && len(src) >= 2*BlockSize && len(dst) >= 2*BlockSize; n -= 2 * BlockSize {
				lo2, hi2 := mulAlpha(lo, hi)
				s0, s1 := pair((*[32]byte)(src))
				d0, d1 := pair((*[32]byte)(dst))
				w0, w1, w2, w3 := load4(s0)
				v0, v1, v2, v3 := load4(s1)
				w0 ^= uint32(lo)
				w1 ^= uint32(lo >> 32)
				w2 ^= uint32(hi)
				w3 ^= uint32(hi >> 32)
				v0 ^= uint32(lo2)
				v1 ^= uint32(lo2 >> 32)
				v2 ^= uint32(hi2)
				v3 ^= uint32(hi2 >> 32)
				if decrypt {
					w0, w1, w2, w3, v0, v1, v2, v3 = decryptWords2(c, w0, w1, w2, w3, v0, v1, v2, v3)
				} else {
					w0, w1, w2, w3, v0, v1, v2, v3 = encryptWords2(c, w0, w1, w2, w3, v0, v1, v2, v3)
				}
				store4(d0, w0^uint32(lo), w1^uint32(lo>>32), w2^uint32(hi), w3^uint32(hi>>32))
				store4(d1, v0^uint32(lo2), v1^uint32(lo2>>32), v2^uint32(hi2), v3^uint32(hi2>>32))
				lo, hi = mulAlpha(lo2, hi2)
				src, dst = src[2*BlockSize:], dst[2*BlockSize:]
			}
		}
		for ; n > 0 && len(src) >= BlockSize && len(dst) >= BlockSize; n -= BlockSize {
			w0, w1, w2, w3 := load4((*[16]byte)(src))
			w0 ^= uint32(lo)
			w1 ^= uint32(lo >> 32)
			w2 ^= uint32(hi)
			w3 ^= uint32(hi >> 32)
			if decrypt {
				w0, w1, w2, w3 = decryptWords(c, w0, w1, w2, w3)
			} else {
				w0, w1, w2, w3 = encryptWords(c, w0, w1, w2, w3)
			}
			store4((*[16]byte)(dst), w0^uint32(lo), w1^uint32(lo>>32), w2^uint32(hi), w3^uint32(hi>>32))
			lo, hi = mulAlpha(lo, hi)
			src, dst = src[BlockSize:], dst[BlockSize:]
		}
	}
}
