package aes

import "encoding/binary"

// The portable path: bitsliced AES, four blocks per pass. A short final pass
// computes on zero padding and writes only the real blocks, so the work done
// depends only on lengths, never on data.

func encryptBlocksGeneric(c *Cipher, dst, src []byte) {
	var q state
	for len(src) > 0 {
		n := min(len(src), 64)
		q.load(src[:n], nil)
		encrypt4(&q, &c.bsEnc, c.rounds)
		q.store(dst[:n], nil)
		src, dst = src[n:], dst[n:]
	}
}

func decryptBlocksGeneric(c *Cipher, dst, src []byte) {
	var q state
	for len(src) > 0 {
		n := min(len(src), 64)
		q.load(src[:n], nil)
		decrypt4(&q, &c.bsDec, c.rounds)
		q.store(dst[:n], nil)
		src, dst = src[n:], dst[n:]
	}
}

// mulAlpha multiplies an XTS tweak (lo, hi: the 16 bytes read little-endian)
// by α in GF(2^128), IEEE 1619 section 5.2: shift left one bit and fold the
// carry out of bit 127 back in with x^7+x^2+x+1 (0x87). Branch-free.
func mulAlpha(lo, hi uint64) (uint64, uint64) {
	carry := -(hi >> 63) & 0x87
	return lo<<1 ^ carry, hi<<1 | lo>>63
}

func xtsGeneric(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) {
	var q state
	var tw [8]uint64
	for s := 0; s < len(tweaks)/16; s++ {
		lo := binary.LittleEndian.Uint64(tweaks[16*s:])
		hi := binary.LittleEndian.Uint64(tweaks[16*s+8:])
		in := src[s*sectorSize : (s+1)*sectorSize]
		out := dst[s*sectorSize : (s+1)*sectorSize]
		for len(in) > 0 {
			n := min(len(in), 64)
			for j := 0; j < n/16; j++ {
				tw[2*j], tw[2*j+1] = lo, hi
				lo, hi = mulAlpha(lo, hi)
			}
			q.load(in[:n], &tw)
			if decrypt {
				decrypt4(&q, &c.bsDec, c.rounds)
			} else {
				encrypt4(&q, &c.bsEnc, c.rounds)
			}
			q.store(out[:n], &tw)
			in, out = in[n:], out[n:]
		}
	}
}
