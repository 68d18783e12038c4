package legacy

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/crypto/blowfish"
)

// Blowfish key lengths accepted here, in bytes: 32 to 448 bits, the range
// OpenSSL, the Linux kernel and TrueCrypt use.
const (
	BlowfishMinKeySize = 4
	BlowfishMaxKeySize = 56
)

// BlowfishBE is standard Blowfish (Schneier 1993): each 8-byte block is two
// big-endian 32-bit halves. This is OpenSSL's "bf" and the Linux kernel's
// "blowfish", used by LUKS.
type BlowfishBE struct {
	c *blowfish.Cipher
}

// NewBlowfishBE returns standard Blowfish keyed with a 4- to 56-byte key.
func NewBlowfishBE(key []byte) (*BlowfishBE, error) {
	c, err := newBlowfish(key)
	if err != nil {
		return nil, err
	}
	return &BlowfishBE{c}, nil
}

func newBlowfish(key []byte) (*blowfish.Cipher, error) {
	if len(key) < BlowfishMinKeySize || len(key) > BlowfishMaxKeySize {
		return nil, fmt.Errorf("blowfish: invalid key size %d (want %d to %d bytes)",
			len(key), BlowfishMinKeySize, BlowfishMaxKeySize)
	}
	return blowfish.NewCipher(key)
}

// BlockSize returns 8.
func (b *BlowfishBE) BlockSize() int { return BlockSize }

// EncryptBlocks encrypts len(src)/8 blocks from src into dst.
func (b *BlowfishBE) EncryptBlocks(dst, src []byte) {
	checkLengths("blowfish", dst, src)
	for i := 0; i+BlockSize <= len(src); i += BlockSize {
		b.c.Encrypt(dst[i:i+BlockSize], src[i:i+BlockSize])
	}
}

// DecryptBlocks decrypts len(src)/8 blocks from src into dst.
func (b *BlowfishBE) DecryptBlocks(dst, src []byte) {
	checkLengths("blowfish", dst, src)
	for i := 0; i+BlockSize <= len(src); i += BlockSize {
		b.c.Decrypt(dst[i:i+BlockSize], src[i:i+BlockSize])
	}
}

// BlowfishLE is TrueCrypt's Blowfish: the same cipher and the same key
// schedule as BlowfishBE, but each 8-byte block's two 32-bit halves are read
// and written little-endian. TrueCrypt's BlowfishEncryptLE loads the halves
// with LE32() while its BlowfishSetKey packs key bytes big-endian exactly as
// Schneier's reference does, and cryptsetup's "blowfish_le" reproduces it by
// byte-swapping each half around the kernel's big-endian Blowfish. So this
// type swaps each half, runs standard Blowfish, and swaps back.
type BlowfishLE struct {
	c *blowfish.Cipher
}

// NewBlowfishLE returns TrueCrypt's little-endian Blowfish keyed with a 4- to
// 56-byte key (TrueCrypt itself always used 56 bytes).
func NewBlowfishLE(key []byte) (*BlowfishLE, error) {
	c, err := newBlowfish(key)
	if err != nil {
		return nil, err
	}
	return &BlowfishLE{c}, nil
}

// BlockSize returns 8.
func (b *BlowfishLE) BlockSize() int { return BlockSize }

// EncryptBlocks encrypts len(src)/8 blocks from src into dst.
func (b *BlowfishLE) EncryptBlocks(dst, src []byte) {
	checkLengths("blowfish_le", dst, src)
	var t [BlockSize]byte
	for i := 0; i+BlockSize <= len(src); i += BlockSize {
		swapHalves(t[:], src[i:i+BlockSize])
		b.c.Encrypt(t[:], t[:])
		swapHalves(dst[i:i+BlockSize], t[:])
	}
}

// DecryptBlocks decrypts len(src)/8 blocks from src into dst.
func (b *BlowfishLE) DecryptBlocks(dst, src []byte) {
	checkLengths("blowfish_le", dst, src)
	var t [BlockSize]byte
	for i := 0; i+BlockSize <= len(src); i += BlockSize {
		swapHalves(t[:], src[i:i+BlockSize])
		b.c.Decrypt(t[:], t[:])
		swapHalves(dst[i:i+BlockSize], t[:])
	}
}

// swapHalves reverses the byte order of each 32-bit half of an 8-byte block.
func swapHalves(dst, src []byte) {
	l := binary.LittleEndian.Uint32(src[0:4])
	r := binary.LittleEndian.Uint32(src[4:8])
	binary.BigEndian.PutUint32(dst[0:4], l)
	binary.BigEndian.PutUint32(dst[4:8], r)
}
