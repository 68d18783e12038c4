// Package serpent implements the Serpent block cipher (Anderson, Biham,
// Knudsen) with 128, 192 and 256-bit keys, in the byte order used by
// TrueCrypt, VeraCrypt, the Linux kernel, Botan and the NESSIE test vectors:
// a 16-byte block is four little-endian 32-bit words x0..x3, and the key is
// read as little-endian words from its first byte (not the byte-reversed
// order of the AES submission's reference vectors).
//
// The cipher works on many blocks per call. The blocks are processed 16 per
// register with AVX-512, 8 with AVX2 and 4 with SSE2 (every other amd64
// CPU) on amd64, 4 with NEON on arm64 and on 32-bit ARM with NEON (chosen
// at run time from HWCAP), each
// 32-bit vector lane holding one block and the S-boxes evaluated as boolean
// circuits on whole registers; several registers' worth of blocks are
// interleaved per loop. Elsewhere (and with the purego build tag) a portable
// bitsliced implementation handles one block at a time. On amd64,
// EncryptXTS and DecryptXTS fuse the XTS tweak masking into the vector loop.
package serpent

//go:generate sh -c "cd _asm && go run ./cmd/gen -out ../serpent_amd64.s -stubs ../serpent_amd64_stubs.go -pkg serpent && go run ./cmd/genarm64 -out ../serpent_arm64.s && go run ./cmd/gengo > ../zsbox_generic.go && gofmt -w ../zsbox_generic.go"

import (
	"fmt"
)

// BlockSize is Serpent's block size in bytes.
const BlockSize = 16

// Cipher is a Serpent instance keyed for both directions. It is safe for
// concurrent use once created.
type Cipher struct {
	// rk holds the 33 round keys, 4 words each, in round order.
	rk [132]uint32
}

// New returns a Serpent cipher for a 16, 24 or 32-byte key.
func New(key []byte) (*Cipher, error) {
	switch len(key) {
	case 16, 24, 32:
	default:
		return nil, fmt.Errorf("serpent: invalid key size %d (want 16, 24 or 32 bytes)", len(key))
	}
	c := &Cipher{}
	expandKey(&c.rk, key)
	return c, nil
}

// BlockSize returns 16.
func (c *Cipher) BlockSize() int { return BlockSize }

// EncryptBlocks encrypts len(src)/16 blocks from src into dst. len(src) must
// be a multiple of 16 and len(dst) >= len(src); dst and src may be the same
// slice but must not otherwise overlap.
func (c *Cipher) EncryptBlocks(dst, src []byte) {
	checkLengths(dst, src)
	encryptBlocks(c, dst[:len(src)], src)
}

// DecryptBlocks is the inverse of EncryptBlocks.
func (c *Cipher) DecryptBlocks(dst, src []byte) {
	checkLengths(dst, src)
	decryptBlocks(c, dst[:len(src)], src)
}

// Reset zeroes the round keys; the cipher must not be used afterwards.
func (c *Cipher) Reset() { clear(c.rk[:]) }

func checkLengths(dst, src []byte) {
	if len(src)%BlockSize != 0 {
		panic("serpent: input not a multiple of the block size")
	}
	if len(dst) < len(src) {
		panic("serpent: output smaller than input")
	}
}

// Implementation names the code path in use: "avx512", "avx2", "sse2",
// "neon" or "generic".
func Implementation() string { return impl.name() }
