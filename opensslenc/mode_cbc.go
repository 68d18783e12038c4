package opensslenc

import (
	"crypto/subtle"

	"github.com/cryptvol/cryptvol/ciphers"
)

// cbcEncrypter is CBC encryption: each block is chained to the previous
// ciphertext, so it is serial by nature: one block per cipher call, or one
// call for the whole chain where the cipher has a CBC kernel (AES).
type cbcEncrypter struct {
	b  ciphers.Block
	iv []byte
}

// cbcChainer is a block cipher that runs a CBC chain itself, leaving the
// last ciphertext block in iv (aes.Cipher.EncryptCBC).
type cbcChainer interface {
	EncryptCBC(dst, src, iv []byte)
}

func (m *cbcEncrypter) crypt(dst, src []byte) {
	if c, ok := m.b.(cbcChainer); ok {
		c.EncryptCBC(dst, src, m.iv)
		return
	}
	bs := len(m.iv)
	prev := m.iv
	for i := 0; i < len(src); i += bs {
		d := dst[i : i+bs]
		subtle.XORBytes(d, src[i:i+bs], prev)
		m.b.EncryptBlocks(d, d)
		prev = d
	}
	if len(src) > 0 {
		copy(m.iv, prev)
	}
}

func (m *cbcEncrypter) wipe() { clear(m.iv); wipeBlock(m.b) }

// cbcDecrypter is CBC decryption, which is parallel by nature: decrypt a
// whole batch of blocks in one call, then XOR each with the ciphertext
// block before it.
type cbcDecrypter struct {
	b  ciphers.Block
	iv []byte
}

func (m *cbcDecrypter) crypt(dst, src []byte) {
	bs := len(m.iv)
	for len(src) > 0 {
		n := min(len(src), batch)
		m.b.DecryptBlocks(dst[:n], src[:n])
		subtle.XORBytes(dst[:bs], dst[:bs], m.iv)
		subtle.XORBytes(dst[bs:n], dst[bs:n], src[:n-bs])
		copy(m.iv, src[n-bs:n])
		dst, src = dst[n:], src[n:]
	}
}

func (m *cbcDecrypter) wipe() { clear(m.iv); wipeBlock(m.b) }

// ecb en- or decrypts each block alone.
type ecb struct {
	b       ciphers.Block
	decrypt bool
}

func (m *ecb) crypt(dst, src []byte) {
	if m.decrypt {
		m.b.DecryptBlocks(dst, src)
	} else {
		m.b.EncryptBlocks(dst, src)
	}
}

func (m *ecb) wipe() { wipeBlock(m.b) }
