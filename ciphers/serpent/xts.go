package serpent

import (
	"crypto/subtle"
	"encoding/binary"
)

// xtsChunk is how many bytes of one sector are processed per pass: the
// tweaks for one chunk live in a stack buffer of this size.
const xtsChunk = 4096

// EncryptXTS encrypts whole sectors in XTS mode (IEEE 1619, no ciphertext
// stealing). tweaks holds one already-encrypted 16-byte initial tweak T0 per
// sector; block j of a sector is masked with T0·α^j in GF(2^128), low byte
// first, reduced by x^128 + x^7 + x^2 + x + 1. sectorSize must be a positive
// multiple of 16 and len(src) must be len(tweaks)/16*sectorSize.
func (c *Cipher) EncryptXTS(dst, src, tweaks []byte, sectorSize int) {
	c.xts(dst, src, tweaks, sectorSize, false)
}

// DecryptXTS is the inverse of EncryptXTS.
func (c *Cipher) DecryptXTS(dst, src, tweaks []byte, sectorSize int) {
	c.xts(dst, src, tweaks, sectorSize, true)
}

func (c *Cipher) xts(dst, src, tweaks []byte, sectorSize int, decrypt bool) {
	if sectorSize <= 0 || sectorSize%BlockSize != 0 {
		panic("serpent: XTS sector size must be a positive multiple of 16")
	}
	if len(tweaks)%BlockSize != 0 || len(src) != len(tweaks)/BlockSize*sectorSize {
		panic("serpent: XTS input does not match the number of tweaks")
	}
	if len(dst) < len(src) {
		panic("serpent: output smaller than input")
	}
	if xtsFused(c, dst, src, tweaks, sectorSize, decrypt) {
		return
	}
	xtsComposed(c, dst, src, tweaks, sectorSize, decrypt)
}

// xtsComposed is XTS built from the block functions: the tweaks of up to
// xtsChunk bytes are written to a buffer, xored in, the blocks encrypted in
// one call, and the tweaks xored again.
func xtsComposed(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) {
	var mask [xtsChunk]byte
	for s := 0; len(tweaks) > 0; s++ {
		lo := binary.LittleEndian.Uint64(tweaks[0:])
		hi := binary.LittleEndian.Uint64(tweaks[8:])
		tweaks = tweaks[BlockSize:]
		for left := sectorSize; left > 0; {
			n := min(left, xtsChunk)
			lo, hi = fillTweaks(mask[:n], lo, hi)
			in, out := src[:n], dst[:n]
			xorBytes(out, in, mask[:n])
			if decrypt {
				decryptBlocks(c, out, out)
			} else {
				encryptBlocks(c, out, out)
			}
			xorBytes(out, out, mask[:n])
			src, dst, left = src[n:], dst[n:], left-n
		}
	}
	clear(mask[:])
}

// mulAlpha multiplies the tweak (lo, hi) by α, the polynomial x.
func mulAlpha(lo, hi uint64) (uint64, uint64) {
	carry := hi >> 63
	return lo<<1 ^ 0x87&-carry, hi<<1 | lo>>63
}

// fillTweaks writes len(buf)/16 successive tweaks starting with (lo, hi)
// and returns the next one.
func fillTweaks(buf []byte, lo, hi uint64) (uint64, uint64) {
	for i := 0; i+BlockSize <= len(buf); i += BlockSize {
		binary.LittleEndian.PutUint64(buf[i:], lo)
		binary.LittleEndian.PutUint64(buf[i+8:], hi)
		lo, hi = mulAlpha(lo, hi)
	}
	return lo, hi
}

// xorBytes sets dst = a ^ b over len(b) bytes.
func xorBytes(dst, a, b []byte) { subtle.XORBytes(dst, a[:len(b)], b) }
