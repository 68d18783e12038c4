//go:build amd64 && !purego

package twofish

import "encoding/binary"

// The AVX-512 kernels process runs of avx512Batch bytes (32 blocks: two
// interleaved groups of 16). t holds the plain S-box permutations s_0..s_3
// (256 bytes each), k the 40 subkeys. The ECB kernels do n runs; the XTS
// kernels do `sectors` sectors of n runs each, with one initial tweak per
// sector read from tweaks.

//go:noescape
func encryptAVX512(t *[1024]byte, k *[40]uint32, dst, src *byte, n int)

//go:noescape
func decryptAVX512(t *[1024]byte, k *[40]uint32, dst, src *byte, n int)

//go:noescape
func encryptXTSAVX512(t *[1024]byte, k *[40]uint32, dst, src *byte, n int, tweaks *byte, sectors int)

//go:noescape
func decryptXTSAVX512(t *[1024]byte, k *[40]uint32, dst, src *byte, n int, tweaks *byte, sectors int)

const avx512Batch = 32 * BlockSize

// plainSboxes recovers the byte permutations s_j from the fused tables: in
// column j of the MDS matrix, row r has the entry 01, so byte r of s[j][x]
// is s_j(x) itself.
func (c *Cipher) plainSboxes(t *[1024]byte) {
	rowOfOne := [4]int{0, 3, 2, 1}
	for j := 0; j < 4; j++ {
		for x := 0; x < 256; x++ {
			t[256*j+x] = byte(c.s[j][x] >> (8 * rowOfOne[j]))
		}
	}
}

// avx512MinTail is the shortest tail worth a whole 32-block kernel run;
// shorter ones are cheaper in the portable code.
const avx512MinTail = 8 * BlockSize

// ecbAVX512 runs the ECB kernel; a tail shorter than a run goes through one
// full run on the stack, or the portable code if it is very short.
func ecbAVX512(c *Cipher, dst, src []byte, decrypt bool) {
	// The kernels are called directly, not through a func value, so escape
	// analysis keeps the stack buffers on the stack.
	t := &c.extra.sbox
	if n := len(src) / avx512Batch; n > 0 {
		if decrypt {
			decryptAVX512(t, &c.k, &dst[0], &src[0], n)
		} else {
			encryptAVX512(t, &c.k, &dst[0], &src[0], n)
		}
		dst, src = dst[n*avx512Batch:], src[n*avx512Batch:]
	}
	if len(src) > 0 && len(src) < avx512MinTail {
		if decrypt {
			decryptBlocksGeneric(c, dst, src)
		} else {
			encryptBlocksGeneric(c, dst, src)
		}
	} else if len(src) > 0 {
		var buf [avx512Batch]byte
		copy(buf[:], src)
		if decrypt {
			decryptAVX512(t, &c.k, &buf[0], &buf[0], 1)
		} else {
			encryptAVX512(t, &c.k, &buf[0], &buf[0], 1)
		}
		copy(dst, buf[:len(src)])
		clear(buf[:])
	}
}

func xtsKernelAVX512(c *Cipher, dst, src *byte, n int, tweaks *byte, sectors int, decrypt bool) {
	if decrypt {
		decryptXTSAVX512(&c.extra.sbox, &c.k, dst, src, n, tweaks, sectors)
	} else {
		encryptXTSAVX512(&c.extra.sbox, &c.k, dst, src, n, tweaks, sectors)
	}
}

func xtsAVX512(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) {
	sectors := len(tweaks) / BlockSize
	if sectors == 0 {
		return
	}
	full := sectorSize / avx512Batch
	if sectorSize%avx512Batch == 0 {
		// Every real sector size (512, 4096, ...): one call for the lot.
		xtsKernelAVX512(c, &dst[0], &src[0], full, &tweaks[0], sectors, decrypt)
		return
	}
	// Other multiples of 16: whole runs in place, then the rest of the
	// sector through one run on the stack with the tweak advanced past the
	// blocks already done.
	rest := sectorSize - full*avx512Batch
	var tw [BlockSize]byte
	var buf [avx512Batch]byte
	for ; len(tweaks) >= BlockSize; tweaks = tweaks[BlockSize:] {
		if full > 0 {
			xtsKernelAVX512(c, &dst[0], &src[0], full, &tweaks[0], 1, decrypt)
			dst, src = dst[full*avx512Batch:], src[full*avx512Batch:]
		}
		lo := binary.LittleEndian.Uint64(tweaks[0:8])
		hi := binary.LittleEndian.Uint64(tweaks[8:16])
		for i := 0; i < full*avx512Batch/BlockSize; i++ {
			lo, hi = mulAlpha(lo, hi)
		}
		binary.LittleEndian.PutUint64(tw[0:8], lo)
		binary.LittleEndian.PutUint64(tw[8:16], hi)
		copy(buf[:], src[:rest])
		xtsKernelAVX512(c, &buf[0], &buf[0], 1, &tw[0], 1, decrypt)
		copy(dst, buf[:rest])
		dst, src = dst[rest:], src[rest:]
	}
	clear(buf[:])
}
