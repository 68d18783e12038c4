package opensslenc

import (
	"crypto/subtle"

	"github.com/cryptvol/cryptvol/ciphers"
)

// ofb is output feedback: the keystream is E(IV), E(E(IV)), ..., serial to
// compute but independent of the data, so a batch of it is made first and
// XORed in one pass.
type ofb struct {
	b  ciphers.Block
	iv []byte // the last keystream block
	ks []byte
}

func (m *ofb) crypt(dst, src []byte) {
	bs := len(m.iv)
	for len(src) > 0 {
		n := min(len(src), len(m.ks))
		full := (n + bs - 1) / bs * bs
		prev := m.iv
		for i := 0; i < full; i += bs {
			m.b.EncryptBlocks(m.ks[i:i+bs], prev)
			prev = m.ks[i : i+bs]
		}
		copy(m.iv, prev)
		subtle.XORBytes(dst[:n], src[:n], m.ks[:n])
		dst, src = dst[n:], src[n:]
	}
}

func (m *ofb) wipe() { clear(m.iv); clear(m.ks); wipeBlock(m.b) }
