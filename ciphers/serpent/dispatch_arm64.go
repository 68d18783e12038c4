//go:build arm64 && !purego

package serpent

// encryptNEON and decryptNEON process n runs of 16 blocks (serpent_arm64.s).
//
//go:noescape
func encryptNEON(rk *[132]uint32, dst, src *byte, n int)

//go:noescape
func decryptNEON(rk *[132]uint32, dst, src *byte, n int)

// impl is NEON, which every arm64 CPU has; tests may lower it.
var impl = implNEON

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

// run processes src in runs of 16 blocks; a tail of 2-15 blocks goes
// through a zero-padded stack buffer, a single block through the portable
// code.
func run(c *Cipher, dst, src []byte, decrypt bool) {
	if impl == implGeneric {
		generic(&c.rk, dst, src, decrypt)
		return
	}
	if n := len(src) / 256; n > 0 {
		neon(&c.rk, &dst[0], &src[0], n, decrypt)
		dst, src = dst[256*n:], src[256*n:]
	}
	switch {
	case len(src) == 0:
	case len(src) == BlockSize:
		generic(&c.rk, dst, src, decrypt)
	default:
		var buf [256]byte
		copy(buf[:], src)
		neon(&c.rk, &buf[0], &buf[0], 1, decrypt)
		copy(dst, buf[:len(src)])
		clear(buf[:])
	}
}

func xtsFused(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) bool { return false }

func available() []implementation { return []implementation{implGeneric, implNEON} }
