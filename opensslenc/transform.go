package opensslenc

import (
	"fmt"

	"github.com/cryptvol/cryptvol/ciphers"
)

// transform en- or decrypts a stream in one direction. The engine calls
// crypt with lengths that are multiples of granule (64 bytes, a multiple
// of every block size here) for the stream modes and of the block size
// for CBC and ECB; only the final call of a stream mode may end in a
// partial block. dst and src have the same length and do not overlap.
// crypt never allocates.
type transform interface {
	crypt(dst, src []byte)
	wipe()
}

// granule divides every chunk the engine hands to a stream mode except
// the last: a multiple of the 8- and 16-byte cipher blocks and of
// ChaCha20's 64-byte block, so no mode has to keep a partial block
// between calls.
const granule = 64

// batch is how many bytes a mode works on between passes (keystream,
// decryption, XOR): small enough to stay in the L1 cache.
const batch = 8 << 10

// newTransform keys the cipher in one direction.
func (c *Cipher) newTransform(key, iv []byte, decrypt bool) (transform, error) {
	if len(key) != c.KeySize || len(iv) != c.IVSize {
		return nil, fmt.Errorf("opensslenc: %s needs a %d-byte key and a %d-byte IV, got %d and %d",
			c.Name, c.KeySize, c.IVSize, len(key), len(iv))
	}
	if c.newStream != nil {
		return c.newStream(key, iv)
	}
	b, err := c.newBlock(key)
	if err != nil {
		return nil, err
	}
	bs := c.BlockSize
	state := append(make([]byte, 0, bs), iv...)
	switch c.Mode {
	case ModeCBC:
		if decrypt {
			return &cbcDecrypter{b: b, iv: state}, nil
		}
		return &cbcEncrypter{b: b, iv: state}, nil
	case ModeECB:
		return &ecb{b: b, decrypt: decrypt}, nil
	case ModeCTR:
		return newCTR(b, state), nil
	case ModeCFB:
		if decrypt {
			return &cfbDecrypter{b: b, iv: state, ks: make([]byte, batch)}, nil
		}
		return &cfbEncrypter{b: b, iv: state, ks: make([]byte, bs)}, nil
	case ModeCFB8:
		return newCFB8(b, state, decrypt), nil
	case ModeOFB:
		return &ofb{b: b, iv: state, ks: make([]byte, batch)}, nil
	}
	return nil, fmt.Errorf("opensslenc: %s: no mode", c.Name)
}

// wipeBlock zeroes a key schedule where the cipher offers a way.
func wipeBlock(b ciphers.Block) {
	if z, ok := b.(interface{ Zero() }); ok {
		z.Zero()
	}
}
