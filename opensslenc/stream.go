package opensslenc

import (
	"crypto/rc4"
	"encoding/binary"

	"github.com/cryptvol/cryptvol/ciphers/chacha20"
)

// chacha is ChaCha20 with OpenSSL's 16-byte IV: a 32-bit little-endian
// block counter followed by the 12-byte nonce. When the 32-bit counter
// wraps, OpenSSL carries into the first nonce word (so the counter is
// really 64 bits), which RFC 8439's ChaCha20 (package chacha20, like
// x/crypto's) refuses to do; this type starts a new cipher at each wrap
// with that word incremented. Because the IV derived from a password is
// random, the wrap can come after any number of blocks, not only after
// 256 GiB.
type chacha struct {
	key   []byte
	nonce [chacha20.NonceSize]byte
	c     *chacha20.Cipher
	left  uint64 // blocks until the 32-bit counter wraps
}

func newChaCha20(key, iv []byte) (transform, error) {
	m := &chacha{key: append([]byte(nil), key...)}
	copy(m.nonce[:], iv[4:])
	if err := m.start(binary.LittleEndian.Uint32(iv[:4])); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *chacha) start(counter uint32) error {
	c, err := chacha20.New(m.key, m.nonce[:], counter)
	if err != nil {
		return err
	}
	m.c, m.left = c, 1<<32-uint64(counter)
	return nil
}

func (m *chacha) crypt(dst, src []byte) {
	for len(src) > 0 {
		if m.left == 0 {
			w := binary.LittleEndian.Uint32(m.nonce[:4]) + 1
			binary.LittleEndian.PutUint32(m.nonce[:4], w)
			m.start(0) // the key was accepted before, so no error
		}
		n := uint64(len(src))
		if n > m.left*64 {
			n = m.left * 64
		}
		m.c.XORKeyStream(dst[:n], src[:n])
		m.left -= (n + 63) / 64
		dst, src = dst[n:], src[n:]
	}
}

func (m *chacha) wipe() { clear(m.key); clear(m.nonce[:]); m.c = nil }

// rc4Stream is RC4 with OpenSSL's 16-byte key and no IV.
type rc4Stream struct{ c *rc4.Cipher }

func newRC4(key, _ []byte) (transform, error) {
	c, err := rc4.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return &rc4Stream{c}, nil
}

func (m *rc4Stream) crypt(dst, src []byte) { m.c.XORKeyStream(dst, src) }
func (m *rc4Stream) wipe()                 { m.c.Reset() }
