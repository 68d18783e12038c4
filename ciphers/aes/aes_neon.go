//go:build (arm || arm64) && !purego

package aes

import "encoding/binary"

// The bitsliced NEON kernels (aes_neon_arm.s, aes_neon_arm64.s, written by
// neongen) run the portable path's algorithm on eight blocks per pass with
// the same bitsliced round keys; nr is 10, 12 or 14 and n counts runs of
// eight blocks. Block i is XORed before and after the rounds with the 16
// bytes at x+i*xstep: the XTS tweaks with xstep 16, or for ECB zeroBlock
// with xstep 0 (one kernel serves both, at 16 loads and XORs per run).

//go:noescape
func encryptNEON(nr int, rk *state, dst, src, x *byte, xstep, n int)

//go:noescape
func decryptNEON(nr int, rk *state, dst, src, x *byte, xstep, n int)

var zeroBlock [BlockSize]byte

const neonRun = 8 * BlockSize

// neonBlocks runs the ECB kernels over whole runs, then a shorter tail
// through a zero-padded stack buffer.
func neonBlocks(c *Cipher, dst, src []byte, decrypt bool) {
	// Direct calls: through a func value the buffer would escape.
	kernel := func(dst, src *byte, n int) {
		if decrypt {
			decryptNEON(c.rounds, &c.bsDec[0], dst, src, &zeroBlock[0], 0, n)
		} else {
			encryptNEON(c.rounds, &c.bsEnc[0], dst, src, &zeroBlock[0], 0, n)
		}
	}
	if n := len(src) / neonRun; n > 0 {
		kernel(&dst[0], &src[0], n)
		dst, src = dst[n*neonRun:], src[n*neonRun:]
	}
	if len(src) > 0 {
		var buf [neonRun]byte
		copy(buf[:], src)
		kernel(&buf[0], &buf[0], 1)
		copy(dst, buf[:len(src)])
		clear(buf[:])
	}
}

// neonXTSChunk is how many bytes' tweaks are computed per kernel call.
const neonXTSChunk = 4 * neonRun

// neonXTS derives the tweaks of up to neonXTSChunk bytes at a time, across
// sector boundaries, and runs the XTS kernel over them.
func neonXTS(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) {
	kernel := func(dst, src, x *byte, n int) {
		if decrypt {
			decryptNEON(c.rounds, &c.bsDec[0], dst, src, x, BlockSize, n)
		} else {
			encryptNEON(c.rounds, &c.bsEnc[0], dst, src, x, BlockSize, n)
		}
	}
	var tw [neonXTSChunk]byte
	lo, hi := binary.LittleEndian.Uint64(tweaks[0:]), binary.LittleEndian.Uint64(tweaks[8:])
	tweaks = tweaks[16:]
	left := sectorSize
	for len(src) > 0 {
		n := min(len(src), neonXTSChunk)
		for j := 0; j < n; j += 16 {
			binary.LittleEndian.PutUint64(tw[j:], lo)
			binary.LittleEndian.PutUint64(tw[j+8:], hi)
			lo, hi = mulAlpha(lo, hi)
			if left -= 16; left == 0 && len(tweaks) > 0 {
				lo, hi = binary.LittleEndian.Uint64(tweaks[0:]), binary.LittleEndian.Uint64(tweaks[8:])
				tweaks = tweaks[16:]
				left = sectorSize
			}
		}
		if runs := n / neonRun; runs > 0 {
			kernel(&dst[0], &src[0], &tw[0], runs)
		}
		if whole := n / neonRun * neonRun; whole < n {
			var buf [neonRun]byte
			copy(buf[:], src[whole:n])
			kernel(&buf[0], &buf[0], &tw[whole], 1)
			copy(dst[whole:n], buf[:])
			clear(buf[:])
		}
		src, dst = src[n:], dst[n:]
	}
	clear(tw[:])
}
