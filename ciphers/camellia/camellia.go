// Package camellia implements the Camellia block cipher (RFC 3713) with
// 128-, 192- and 256-bit keys, as VeraCrypt uses it (256-bit keys in XTS).
//
// The cipher works on many 16-byte blocks per call so the sector layer never
// pays a per-block interface call. Blocks are read and written big-endian,
// exactly as RFC 3713 numbers their bits, so the byte strings of the RFC and
// NESSIE test vectors are the bytes on disk.
//
// The portable code uses the usual combined S-box/P-function lookup tables
// and runs four blocks side by side. On amd64 with AVX-512 and GFNI a
// generated assembly kernel (gen_gfni.go) encrypts 64 blocks at once in
// byte-sliced form, computing the S-boxes with GF2P8AFFINEQB and
// GF2P8AFFINEINVQB; Cipher also implements fused XTS (EncryptXTS and
// DecryptXTS) so the tweaks are applied inside that kernel.
package camellia

import (
	"fmt"
)

// BlockSize is the Camellia block size in bytes.
const BlockSize = 16

// Cipher is a keyed Camellia instance. It is safe for concurrent use: the
// methods only read the key schedule.
type Cipher struct {
	enc schedule
	dec schedule
}

// New returns Camellia keyed with a 16-, 24- or 32-byte key.
func New(key []byte) (*Cipher, error) {
	switch len(key) {
	case 16, 24, 32:
	default:
		return nil, fmt.Errorf("camellia: invalid key size %d (want 16, 24 or 32 bytes)", len(key))
	}
	c := new(Cipher)
	expandKey(&c.enc, key)
	c.dec = c.enc.inverse()
	c.enc.prepareArch()
	c.dec.prepareArch()
	return c, nil
}

// BlockSize returns 16.
func (c *Cipher) BlockSize() int { return BlockSize }

// EncryptBlocks encrypts len(src)/16 blocks from src into dst. dst and src
// may be the same slice. It panics if len(src) is not a multiple of 16 or dst
// is shorter than src.
func (c *Cipher) EncryptBlocks(dst, src []byte) {
	checkLengths(dst, src)
	cryptBlocks(&c.enc, dst, src)
}

// DecryptBlocks decrypts len(src)/16 blocks from src into dst, with the same
// rules as EncryptBlocks.
func (c *Cipher) DecryptBlocks(dst, src []byte) {
	checkLengths(dst, src)
	cryptBlocks(&c.dec, dst, src)
}

// Implementation names the code path in use, for diagnostics and benchmarks.
func Implementation() string {
	if accelerated() && !forceGeneric {
		return "amd64 AVX-512+GFNI, 64 blocks byte-sliced (generic for short tails)"
	}
	return "generic (64-bit SP tables)"
}

// forceGeneric makes the tests run the generic code on machines that have
// an accelerated path.
var forceGeneric bool

// acceleratedMinTail is the shortest tail (after whole 64-block groups) worth
// a padded run of the 64-block kernel, which costs about as much as 6 to 8
// blocks of generic code. Tests lower it to push every vector through the
// kernel.
var acceleratedMinTail = 8 * BlockSize

func checkLengths(dst, src []byte) {
	if len(src)%BlockSize != 0 {
		panic("camellia: input not a multiple of the block size")
	}
	if len(dst) < len(src) {
		panic("camellia: output smaller than input")
	}
}
