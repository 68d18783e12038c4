package sector

import (
	"fmt"
	"hash"

	"github.com/cryptvol/cryptvol/ciphers"
)

// essiv is dm-crypt's "encrypted sector|salt IV": plain64 encrypted with a
// cipher keyed by a hash of the volume key.
type essiv struct {
	c ciphers.Block
}

// ESSIV returns dm-crypt's essiv:HASH generator: the IV of sector n is
// E_salt(plain64(n)), where salt = HASH(volumeKey) keys newCipher, which must
// be the same algorithm as the bulk cipher (the kernel's essiv template takes
// the cipher name out of "cbc(aes)" or "xts(aes)"). The digest size sets the
// ESSIV key size: sha256 gives AES-256 even for an AES-128 volume.
//
// volumeKey is the whole key dm-crypt is given: for xts-essiv:sha256 with
// AES-256 that is both 32-byte halves, 64 bytes (crypto/essiv.c hashes the
// complete skcipher key).
//
// For cryptsetup's "wp256" (as in aes-xts-essiv:wp256) pass
// TruncatedHash(whirlpool, 32): wp256 is the kernel's own name for Whirlpool
// cut to its first 32 bytes (crypto/wp512.c). cryptsetup hands the name to
// dm-crypt unchanged; its userspace crypto backends do not list wp256, so
// the kernel's definition is the only one.
func ESSIV(newCipher func(key []byte) (ciphers.Block, error), h hash.Hash, volumeKey []byte) (IVGenerator, error) {
	h.Reset()
	h.Write(volumeKey)
	salt := h.Sum(nil)
	c, err := newCipher(salt)
	clear(salt)
	h.Reset()
	if err != nil {
		return nil, fmt.Errorf("sector: ESSIV cipher with a %d-byte hash as key: %w", h.Size(), err)
	}
	if bs := c.BlockSize(); bs < 8 {
		return nil, fmt.Errorf("sector: ESSIV cipher block size %d is too small", bs)
	}
	return &essiv{c: c}, nil
}

// IVs implements IVGenerator: plain64 IVs for the whole run, then one
// EncryptBlocks call over all of them.
func (e *essiv) IVs(dst []byte, ivSize int, first uint64) { e.ivsStride(dst, ivSize, first, 1) }

func (e *essiv) ivsStride(dst []byte, ivSize int, first, stride uint64) {
	if ivSize != e.c.BlockSize() {
		panic("sector: ESSIV IV size differs from its cipher's block size")
	}
	IVPlain64.ivsStride(dst, ivSize, first, stride)
	e.c.EncryptBlocks(dst, dst)
}

// TruncatedHash returns h with its digest cut to the first size bytes, the
// way the kernel defines wp256 and wp384 from Whirlpool.
func TruncatedHash(h hash.Hash, size int) hash.Hash {
	if size <= 0 || size > h.Size() {
		panic("sector: truncated hash size out of range")
	}
	return &truncatedHash{Hash: h, size: size}
}

type truncatedHash struct {
	hash.Hash
	size int
}

func (t *truncatedHash) Size() int { return t.size }

func (t *truncatedHash) Sum(b []byte) []byte {
	full := t.Hash.Sum(nil)
	b = append(b, full[:t.size]...)
	clear(full)
	return b
}
