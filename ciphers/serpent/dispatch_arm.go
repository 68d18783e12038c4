//go:build arm && !purego

package serpent

import (
	"encoding/binary"

	"golang.org/x/sys/cpu"
)

// encryptNEON and decryptNEON process n runs of 8 blocks (serpent_arm.s,
// ARMv7 NEON). Raspberry Pi OS 32-bit binaries are GOARM=6 or 7 and run on
// the Pi 1's ARM1176 as well, which has no NEON, so the kernel is chosen
// at run time from the HWCAP bit (GODEBUG=cpu.neon=off masks it).
//
//go:noescape
func encryptNEON(rk *[132]uint32, dst, src *byte, n int)

//go:noescape
func decryptNEON(rk *[132]uint32, dst, src *byte, n int)

const neonRun = 8

var impl = available()[len(available())-1]

func available() []implementation {
	if cpu.ARM.HasNEON {
		return []implementation{implGeneric, implNEON}
	}
	return []implementation{implGeneric}
}

// encryptXTSNEON and decryptXTSNEON are the kernels above with XTS
// masking: block i is XORed with the 16 bytes at x+16i before and after.
//
//go:noescape
func encryptXTSNEON(rk *[132]uint32, dst, src, x *byte, n int)

//go:noescape
func decryptXTSNEON(rk *[132]uint32, dst, src, x *byte, n int)

// xtsTweakChunk is how many bytes' tweaks are made per kernel call.
const xtsTweakChunk = 4 * neonRun * BlockSize

// xtsFused derives the tweaks of up to xtsTweakChunk bytes at a time,
// across sector boundaries, and runs the XTS kernel over them; a tail of
// fewer than neonRun blocks goes through a zero-padded stack buffer.
func xtsFused(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) bool {
	if impl != implNEON {
		return false
	}
	kernel := func(dst, src, x *byte, n int) {
		if decrypt {
			decryptXTSNEON(&c.rk, dst, src, x, n)
		} else {
			encryptXTSNEON(&c.rk, dst, src, x, n)
		}
	}
	const runBytes = neonRun * BlockSize
	var tw [xtsTweakChunk]byte
	lo, hi := binary.LittleEndian.Uint64(tweaks[0:]), binary.LittleEndian.Uint64(tweaks[8:])
	tweaks = tweaks[BlockSize:]
	left := sectorSize
	for len(src) > 0 {
		n := min(len(src), xtsTweakChunk)
		for j := 0; j < n; j += BlockSize {
			binary.LittleEndian.PutUint64(tw[j:], lo)
			binary.LittleEndian.PutUint64(tw[j+8:], hi)
			lo, hi = mulAlpha(lo, hi)
			if left -= BlockSize; left == 0 && len(tweaks) > 0 {
				lo, hi = binary.LittleEndian.Uint64(tweaks[0:]), binary.LittleEndian.Uint64(tweaks[8:])
				tweaks = tweaks[BlockSize:]
				left = sectorSize
			}
		}
		whole := n / runBytes * runBytes
		if whole > 0 {
			kernel(&dst[0], &src[0], &tw[0], whole/runBytes)
		}
		if whole < n {
			var buf [runBytes]byte
			copy(buf[:], src[whole:n])
			kernel(&buf[0], &buf[0], &tw[whole], 1)
			copy(dst[whole:n], buf[:])
			clear(buf[:])
		}
		src, dst = src[n:], dst[n:]
	}
	clear(tw[:])
	return true
}
