//go:build (arm || arm64) && !purego

package serpent

// The NEON kernels (serpent_arm64.s, serpent_arm.s) process n runs of
// neonRun blocks; run feeds them.

func encryptBlocks(c *Cipher, dst, src []byte) { run(c, dst, src, false) }
func decryptBlocks(c *Cipher, dst, src []byte) { run(c, dst, src, true) }

func neon(rk *[132]uint32, dst, src *byte, n int, decrypt bool) {
	if decrypt {
		decryptNEON(rk, dst, src, n)
	} else {
		encryptNEON(rk, dst, src, n)
	}
}

func generic(rk *[132]uint32, dst, src []byte, decrypt bool) {
	if decrypt {
		decryptGeneric(rk, dst, src)
	} else {
		encryptGeneric(rk, dst, src)
	}
}

// run processes src in runs of neonRun blocks; a shorter tail of two or
// more blocks goes through a zero-padded stack buffer, a single block
// through the portable code.
func run(c *Cipher, dst, src []byte, decrypt bool) {
	if impl == implGeneric {
		generic(&c.rk, dst, src, decrypt)
		return
	}
	const runBytes = neonRun * BlockSize
	if n := len(src) / runBytes; n > 0 {
		neon(&c.rk, &dst[0], &src[0], n, decrypt)
		dst, src = dst[runBytes*n:], src[runBytes*n:]
	}
	switch {
	case len(src) == 0:
	case len(src) == BlockSize:
		generic(&c.rk, dst, src, decrypt)
	default:
		var buf [runBytes]byte
		copy(buf[:], src)
		neon(&c.rk, &buf[0], &buf[0], 1, decrypt)
		copy(dst, buf[:len(src)])
		clear(buf[:])
	}
}
