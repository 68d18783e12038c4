package legacy

import (
	"crypto/cipher"
	"crypto/des"
	"fmt"
)

// TripleDESKeySize is the Triple DES (EDE, three independent keys) key size.
const TripleDESKeySize = 24

// TripleDES is Triple DES in EDE form with three keys (TDEA keying option 1),
// as TrueCrypt and the kernel's des3_ede use it.
//
// It wraps crypto/des, which only exposes a cipher.Block interface, so each
// 8-byte block costs one interface call. That is a few nanoseconds against
// the hundreds each Triple DES block takes, and this read-only legacy cipher
// does not justify an own DES implementation.
type TripleDES struct {
	b cipher.Block
}

// NewTripleDES returns Triple DES keyed with a 24-byte key K1||K2||K3.
func NewTripleDES(key []byte) (*TripleDES, error) {
	if len(key) != TripleDESKeySize {
		return nil, fmt.Errorf("triple des: invalid key size %d (want 24 bytes)", len(key))
	}
	b, err := des.NewTripleDESCipher(key)
	if err != nil {
		return nil, err
	}
	return &TripleDES{b}, nil
}

// BlockSize returns 8.
func (t *TripleDES) BlockSize() int { return BlockSize }

// EncryptBlocks encrypts len(src)/8 blocks from src into dst.
func (t *TripleDES) EncryptBlocks(dst, src []byte) {
	checkLengths("triple des", dst, src)
	for i := 0; i+BlockSize <= len(src); i += BlockSize {
		t.b.Encrypt(dst[i:i+BlockSize], src[i:i+BlockSize])
	}
}

// DecryptBlocks decrypts len(src)/8 blocks from src into dst.
func (t *TripleDES) DecryptBlocks(dst, src []byte) {
	checkLengths("triple des", dst, src)
	for i := 0; i+BlockSize <= len(src); i += BlockSize {
		t.b.Decrypt(dst[i:i+BlockSize], src[i:i+BlockSize])
	}
}
