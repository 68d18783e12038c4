// Package kuznyechik implements the Kuznyechik ("Grasshopper") block cipher
// of GOST R 34.12-2015 (RFC 7801): 128-bit blocks, 256-bit keys, as used by
// VeraCrypt.
//
// Byte order: a block or key is the byte string of the RFC's hexadecimal
// examples, most significant byte first. RFC 7801 writes the block as
// a15||...||a0 with a15 leftmost, and that leftmost byte is byte 0 in
// memory. This is how VeraCrypt (and cryptsetup's backends) feed bytes to
// the cipher: VeraCrypt's self-test encrypts the bytes 11 22 33 ... 88 under
// the key bytes 88 99 aa ... ef and expects 7f 67 9d ... cd, the RFC example
// read left to right.
package kuznyechik

import "fmt"

// BlockSize is the Kuznyechik block size in bytes.
const BlockSize = 16

// KeySize is the Kuznyechik key size in bytes.
const KeySize = 32

// Cipher is a keyed Kuznyechik instance, safe for concurrent use.
type Cipher struct {
	enc [10]block // round keys K1..K10
	dec [10]block // K1, L^-1(K2)..L^-1(K9), K10: see decryptBlocks
}

// New returns Kuznyechik keyed with a 32-byte key.
func New(key []byte) (*Cipher, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("kuznyechik: invalid key size %d (want 32 bytes)", len(key))
	}
	initTables()
	c := new(Cipher)
	expandKey(c, key)
	return c, nil
}

// BlockSize returns 16.
func (c *Cipher) BlockSize() int { return BlockSize }

// EncryptBlocks encrypts len(src)/16 blocks from src into dst. dst and src
// may be the same slice. It panics if len(src) is not a multiple of 16 or dst
// is shorter than src.
func (c *Cipher) EncryptBlocks(dst, src []byte) {
	checkLengths(dst, src)
	encryptBlocks(c, dst, src)
}

// DecryptBlocks decrypts len(src)/16 blocks from src into dst, with the same
// rules as EncryptBlocks.
func (c *Cipher) DecryptBlocks(dst, src []byte) {
	checkLengths(dst, src)
	decryptBlocks(c, dst, src)
}

// Implementation names the code path in use.
func Implementation() string { return "generic (LS lookup tables)" }

func checkLengths(dst, src []byte) {
	if len(src)%BlockSize != 0 {
		panic("kuznyechik: input not a multiple of the block size")
	}
	if len(dst) < len(src) {
		panic("kuznyechik: output smaller than input")
	}
}
