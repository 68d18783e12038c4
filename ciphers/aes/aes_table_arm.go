//go:build arm && !purego

package aes

import (
	"crypto/subtle"
	"encoding/binary"
	"os"
)

// The table path (aes_table_arm.s, written by tablegen): FIPS-197 rounds
// with 1 KiB lookup tables in ARM scalar assembly, for CPUs without NEON
// (the Raspberry Pi 1) where the constant-time bitsliced code is several
// times slower than OpenSSL's tables. Table lookups leave the indices,
// which depend on the key and the data, in the cache, which another
// process on the machine can probe; so this path is used only when the
// user asks for it with CRYPTVOL_AES_TABLES=1, and its name says so.

//go:noescape
func encryptBlocksTable(nr int, rk *byte, dst, src *byte, n int)

//go:noescape
func decryptBlocksTable(nr int, rk *byte, dst, src *byte, n int)

// tablesRequested: the environment opts in to the table path.
var tablesRequested = os.Getenv("CRYPTVOL_AES_TABLES") == "1"

// te0[x] is the MixColumns column (2, 1, 1, 3)·S(x), row 0 in the low
// byte; td0[x] is the InvMixColumns column (14, 9, 13, 11)·S⁻¹(x). The
// assembly takes the other columns by rotation.
var (
	te0, td0                [256]uint32
	sboxTable, invSboxTable [256]byte
)

func init() {
	for x := 0; x < 256; x++ {
		s := sbox(byte(x))
		sboxTable[x] = s
		invSboxTable[s] = byte(x)
	}
	for x := 0; x < 256; x++ {
		s, i := sboxTable[x], invSboxTable[x]
		te0[x] = uint32(gfMul(s, 2)) | uint32(s)<<8 | uint32(s)<<16 | uint32(gfMul(s, 3))<<24
		td0[x] = uint32(gfMul(i, 14)) | uint32(gfMul(i, 9))<<8 | uint32(gfMul(i, 13))<<16 | uint32(gfMul(i, 11))<<24
	}
}

func tableBlocks(c *Cipher, dst, src []byte, decrypt bool) {
	if decrypt {
		decryptBlocksTable(c.rounds, &c.dec[0], &dst[0], &src[0], len(src)/BlockSize)
	} else {
		encryptBlocksTable(c.rounds, &c.enc[0], &dst[0], &src[0], len(src)/BlockSize)
	}
}

// tableXTS masks up to 512 bytes at a time with their tweaks,
// runs the block kernel over them, and masks again.
func tableXTS(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) {
	const chunk = 512
	var mask [chunk]byte
	lo, hi := binary.LittleEndian.Uint64(tweaks[0:]), binary.LittleEndian.Uint64(tweaks[8:])
	tweaks = tweaks[16:]
	left := sectorSize
	for len(src) > 0 {
		n := min(len(src), chunk)
		for j := 0; j < n; j += 16 {
			binary.LittleEndian.PutUint64(mask[j:], lo)
			binary.LittleEndian.PutUint64(mask[j+8:], hi)
			lo, hi = mulAlpha(lo, hi)
			if left -= 16; left == 0 && len(tweaks) > 0 {
				lo, hi = binary.LittleEndian.Uint64(tweaks[0:]), binary.LittleEndian.Uint64(tweaks[8:])
				tweaks = tweaks[16:]
				left = sectorSize
			}
		}
		subtle.XORBytes(dst[:n], src[:n], mask[:n])
		tableBlocks(c, dst[:n], dst[:n], decrypt)
		subtle.XORBytes(dst[:n], dst[:n], mask[:n])
		src, dst = src[n:], dst[n:]
	}
	clear(mask[:])
}
