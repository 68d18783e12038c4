// Package twofish implements the Twofish block cipher (Schneier, Kelsey,
// Whiting, Wagner, Hall and Ferguson, "Twofish: A 128-Bit Block Cipher",
// AES submission, 15 June 1998) with 128-, 192- and 256-bit keys.
//
// It is written for bulk disk encryption: a Cipher encrypts many blocks per
// call, and EncryptXTS/DecryptXTS run XTS without materialising tweaks.
// The portable Go code fuses the key-dependent S-boxes with the MDS matrix
// into four 256-entry uint32 tables at key setup (the paper's "full keying"),
// unrolls the rounds and, on 64-bit machines, interleaves two blocks. On
// amd64 CPUs with AVX-512 VBMI and GFNI an assembly kernel encrypts 32
// blocks at a time with the S-boxes held in vector registers (see
// gen_avx512.go). Implementation reports which code runs.
//
// This package does not import package ciphers (which registers it); the
// registration lives in ciphers/register_twofish.go.
package twofish

//go:generate go run gen_generic.go
//go:generate go run gen_avx512.go

import (
	"fmt"
)

// BlockSize is the Twofish block size in bytes.
const BlockSize = 16

// Cipher is a Twofish instance keyed for both directions. It is safe for
// concurrent use: its methods only read the key schedule.
type Cipher struct {
	// k holds the subkeys K_0..K_39: input whitening K_0..K_3, output
	// whitening K_4..K_7, then two per round. It comes first so that its
	// offsets fit the 12-bit immediates of 32-bit ARM loads.
	k [40]uint32
	// s[j][x] is column j of the MDS matrix times the key-dependent S-box
	// byte s_j(x), so g(X) = s[0][x0] ^ s[1][x1] ^ s[2][x2] ^ s[3][x3].
	s [4][256]uint32
	// impl is the kernel chosen at New; extra holds what it needs beyond s
	// and k (nil for the portable code).
	impl  kernel
	extra *kernelTables
}

// KeySizeError is returned by New for a key that is not 16, 24 or 32 bytes.
type KeySizeError int

func (k KeySizeError) Error() string {
	return fmt.Sprintf("twofish: invalid key size %d (want 16, 24 or 32 bytes)", int(k))
}

// New returns a Twofish cipher keyed with key, which must be 16, 24 or 32
// bytes long.
func New(key []byte) (*Cipher, error) {
	return newWithKernel(key, bestKernel())
}

func newWithKernel(key []byte, kn kernel) (*Cipher, error) {
	switch len(key) {
	case 16, 24, 32:
	default:
		return nil, KeySizeError(len(key))
	}
	c := &Cipher{impl: kn}
	c.expandKey(key)
	c.prepareKernel()
	return c, nil
}

// BlockSize returns the block size, 16.
func (c *Cipher) BlockSize() int { return BlockSize }

// EncryptBlocks encrypts the whole blocks of src into dst. len(src) must be a
// multiple of 16 and len(dst) >= len(src); dst and src may be the same slice
// but must not otherwise overlap.
func (c *Cipher) EncryptBlocks(dst, src []byte) {
	checkBlocks(dst, src)
	c.encryptBlocks(dst[:len(src)], src)
}

// DecryptBlocks decrypts the whole blocks of src into dst, with the same rules
// as EncryptBlocks.
func (c *Cipher) DecryptBlocks(dst, src []byte) {
	checkBlocks(dst, src)
	c.decryptBlocks(dst[:len(src)], src)
}

// Implementation names the kernel in use, e.g. "amd64-avx512" or "generic".
func (c *Cipher) Implementation() string { return c.impl.String() }

// Implementation names the kernel New selects on this machine.
func Implementation() string { return bestKernel().String() }

func checkBlocks(dst, src []byte) {
	if len(src)%BlockSize != 0 {
		panic("twofish: input not a multiple of the block size")
	}
	if len(dst) < len(src) {
		panic("twofish: output smaller than input")
	}
}
