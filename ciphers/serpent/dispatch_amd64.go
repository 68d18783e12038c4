//go:build amd64 && !purego

package serpent

import "golang.org/x/sys/cpu"

// impl is the fastest path this CPU supports; tests may lower it.
var impl = bestImplementation()

func bestImplementation() implementation {
	switch {
	case hasAVX512():
		return implAVX512
	case cpu.X86.HasAVX2:
		return implAVX2
	}
	// SSE2 is part of amd64: every CPU without AVX2 runs these kernels.
	return implSSE2
}

// hasAVX512 reports AVX-512 Foundation (with OS support for its registers);
// the AVX-512 path also runs AVX2 kernels for short tails.
func hasAVX512() bool { return cpu.X86.HasAVX512F && cpu.X86.HasAVX2 }

func encryptBlocks(c *Cipher, dst, src []byte) { run(c, dst, src, false) }
func decryptBlocks(c *Cipher, dst, src []byte) { run(c, dst, src, true) }

// group8 and group16 run the AVX2 and AVX-512 kernels. They are called
// directly, never through a func value, so that //go:noescape keeps run's
// stack buffer off the heap.
func group8(rk *[132]uint32, dst, src *byte, n int, decrypt bool) {
	if decrypt {
		decryptAVX2(rk, dst, src, n)
	} else {
		encryptAVX2(rk, dst, src, n)
	}
}

func group8x2(rk *[132]uint32, dst, src *byte, n int, decrypt bool) {
	if decrypt {
		decryptAVX2x2(rk, dst, src, n)
	} else {
		encryptAVX2x2(rk, dst, src, n)
	}
}

func group64(rk *[132]uint32, dst, src *byte, n int, decrypt bool) {
	if decrypt {
		decryptAVX512x4(rk, dst, src, n)
	} else {
		encryptAVX512x4(rk, dst, src, n)
	}
}

func group32(rk *[132]uint32, dst, src *byte, n int, decrypt bool) {
	if decrypt {
		decryptAVX512x2(rk, dst, src, n)
	} else {
		encryptAVX512x2(rk, dst, src, n)
	}
}

func group16(rk *[132]uint32, dst, src *byte, n int, decrypt bool) {
	if decrypt {
		decryptAVX512(rk, dst, src, n)
	} else {
		encryptAVX512(rk, dst, src, n)
	}
}

func group4sse(rk *[132]uint32, dst, src *byte, n int, decrypt bool) {
	if decrypt {
		decryptSSE2(rk, dst, src, n)
	} else {
		encryptSSE2(rk, dst, src, n)
	}
}

func group8sse(rk *[132]uint32, dst, src *byte, n int, decrypt bool) {
	if decrypt {
		decryptSSE2x2(rk, dst, src, n)
	} else {
		encryptSSE2x2(rk, dst, src, n)
	}
}

func generic(rk *[132]uint32, dst, src []byte, decrypt bool) {
	if decrypt {
		decryptGeneric(rk, dst, src)
	} else {
		encryptGeneric(rk, dst, src)
	}
}

// run processes src in groups of 64, 32 and 16 (AVX-512) or 16 and 8
// (AVX2) blocks: more independent blocks per loop keep more of the core's
// vector units busy. A tail
// of 2-7 blocks goes through a zero-padded 8-block stack buffer, since one
// AVX2 group is still cheaper than several blocks of the portable code.
func run(c *Cipher, dst, src []byte, decrypt bool) {
	switch impl {
	case implGeneric:
		generic(&c.rk, dst, src, decrypt)
		return
	case implSSE2:
		runSSE2(c, dst, src, decrypt)
		return
	}
	if impl == implAVX512 {
		if n := len(src) / 1024; n > 0 {
			group64(&c.rk, &dst[0], &src[0], n, decrypt)
			dst, src = dst[1024*n:], src[1024*n:]
		}
		if n := len(src) / 512; n > 0 {
			group32(&c.rk, &dst[0], &src[0], n, decrypt)
			dst, src = dst[512*n:], src[512*n:]
		}
		if n := len(src) / 256; n > 0 {
			group16(&c.rk, &dst[0], &src[0], n, decrypt)
			dst, src = dst[256*n:], src[256*n:]
		}
	} else if n := len(src) / 256; n > 0 {
		group8x2(&c.rk, &dst[0], &src[0], n, decrypt)
		dst, src = dst[256*n:], src[256*n:]
	}
	if n := len(src) / 128; n > 0 {
		group8(&c.rk, &dst[0], &src[0], n, decrypt)
		dst, src = dst[128*n:], src[128*n:]
	}
	switch {
	case len(src) == 0:
	case len(src) == BlockSize:
		generic(&c.rk, dst, src, decrypt)
	default:
		var buf [128]byte
		copy(buf[:], src)
		group8(&c.rk, &buf[0], &buf[0], 1, decrypt)
		copy(dst, buf[:len(src)])
		clear(buf[:])
	}
}

// runSSE2 is run for the SSE2 kernels: groups of 8 blocks (two register
// sets interleaved), then 4, and a tail of 2-3 blocks through a
// zero-padded 4-block buffer.
func runSSE2(c *Cipher, dst, src []byte, decrypt bool) {
	if n := len(src) / 128; n > 0 {
		group8sse(&c.rk, &dst[0], &src[0], n, decrypt)
		dst, src = dst[128*n:], src[128*n:]
	}
	if len(src) >= 64 {
		group4sse(&c.rk, &dst[0], &src[0], 1, decrypt)
		dst, src = dst[64:], src[64:]
	}
	switch {
	case len(src) == 0:
	case len(src) == BlockSize:
		generic(&c.rk, dst, src, decrypt)
	default:
		var buf [64]byte
		copy(buf[:], src)
		group4sse(&c.rk, &buf[0], &buf[0], 1, decrypt)
		copy(dst, buf[:len(src)])
		clear(buf[:])
	}
}

// available lists the paths this CPU can run, for tests and benchmarks.
func available() []implementation {
	out := []implementation{implGeneric, implSSE2}
	if cpu.X86.HasAVX2 {
		out = append(out, implAVX2)
	}
	if hasAVX512() {
		out = append(out, implAVX512)
	}
	return out
}

// xtsFused runs XTS through the fused kernels, which mask the blocks with
// their tweaks inside the vector loop. It handles sector sizes that are a
// multiple of the kernel's run (128 bytes with SSE2, 256 with AVX2, 512 or
// 1024 with AVX-512) and reports false otherwise, leaving the work to the portable
// composition.
func xtsFused(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) bool {
	if len(src) == 0 {
		return true
	}
	switch impl {
	case implSSE2:
		if sectorSize%128 != 0 {
			return false
		}
		per := sectorSize / 128
		n := len(src) / 128
		if decrypt {
			xtsDecryptSSE2x2(&c.rk, &dst[0], &src[0], n, &tweaks[0], per)
		} else {
			xtsEncryptSSE2x2(&c.rk, &dst[0], &src[0], n, &tweaks[0], per)
		}
		return true
	case implAVX512:
		if sectorSize%1024 == 0 {
			per := sectorSize / 1024
			n := len(src) / 1024
			if decrypt {
				xtsDecryptAVX512x4(&c.rk, &dst[0], &src[0], n, &tweaks[0], per)
			} else {
				xtsEncryptAVX512x4(&c.rk, &dst[0], &src[0], n, &tweaks[0], per)
			}
			return true
		}
		if sectorSize%512 != 0 {
			return false
		}
		per := sectorSize / 512
		n := len(src) / 512
		if decrypt {
			xtsDecryptAVX512x2(&c.rk, &dst[0], &src[0], n, &tweaks[0], per)
		} else {
			xtsEncryptAVX512x2(&c.rk, &dst[0], &src[0], n, &tweaks[0], per)
		}
		return true
	case implAVX2:
		if sectorSize%256 != 0 {
			return false
		}
		per := sectorSize / 256
		n := len(src) / 256
		if decrypt {
			xtsDecryptAVX2x2(&c.rk, &dst[0], &src[0], n, &tweaks[0], per)
		} else {
			xtsEncryptAVX2x2(&c.rk, &dst[0], &src[0], n, &tweaks[0], per)
		}
		return true
	}
	return false
}
