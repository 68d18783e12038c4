package opensslenc

import (
	"crypto/subtle"

	"github.com/cryptvol/cryptvol/ciphers"
)

// cfbEncrypter is full-block cipher feedback: C_i = P_i xor E(C_{i-1}),
// serial because each keystream block needs the ciphertext before it.
type cfbEncrypter struct {
	b  ciphers.Block
	iv []byte // C_{i-1}
	ks []byte // one block
}

func (m *cfbEncrypter) crypt(dst, src []byte) {
	bs := len(m.iv)
	for i := 0; i < len(src); i += bs {
		m.b.EncryptBlocks(m.ks, m.iv)
		n := subtle.XORBytes(dst[i:], src[i:min(i+bs, len(src))], m.ks)
		if n == bs {
			copy(m.iv, dst[i:i+bs])
		}
	}
}

func (m *cfbEncrypter) wipe() { clear(m.iv); clear(m.ks); wipeBlock(m.b) }

// cfbDecrypter is CFB decryption, parallel: every keystream block is the
// encryption of a ciphertext block already at hand.
type cfbDecrypter struct {
	b  ciphers.Block
	iv []byte
	ks []byte // batch bytes
}

func (m *cfbDecrypter) crypt(dst, src []byte) {
	bs := len(m.iv)
	for len(src) > 0 {
		n := min(len(src), len(m.ks))
		full := (n + bs - 1) / bs * bs // bytes of keystream, whole blocks
		m.b.EncryptBlocks(m.ks[:bs], m.iv)
		m.b.EncryptBlocks(m.ks[bs:full], src[:full-bs])
		if n == full {
			copy(m.iv, src[n-bs:n])
		}
		subtle.XORBytes(dst[:n], src[:n], m.ks[:n])
		dst, src = dst[n:], src[n:]
	}
}

func (m *cfbDecrypter) wipe() { clear(m.iv); clear(m.ks); wipeBlock(m.b) }

// cfb8 is 8-bit cipher feedback: one block encryption per byte, the block
// being the last BlockSize bytes of IV || ciphertext. Encryption is serial;
// decryption gathers a batch of those windows and encrypts them in one
// call.
type cfb8 struct {
	b       ciphers.Block
	decrypt bool
	reg     []byte // 2*bs: window in reg[:bs], scratch in reg[bs:]
	windows []byte // decryption: cfb8Batch windows of bs bytes
	hist    []byte // decryption: bs + cfb8Batch bytes of IV||ciphertext
}

const cfb8Batch = 512

func newCFB8(b ciphers.Block, iv []byte, decrypt bool) *cfb8 {
	bs := len(iv)
	m := &cfb8{b: b, decrypt: decrypt, reg: make([]byte, 2*bs)}
	copy(m.reg, iv)
	if decrypt {
		m.windows = make([]byte, cfb8Batch*bs)
		m.hist = make([]byte, bs+cfb8Batch)
	}
	return m
}

func (m *cfb8) crypt(dst, src []byte) {
	bs := len(m.reg) / 2
	if !m.decrypt {
		win, out := m.reg[:bs], m.reg[bs:]
		for i := range src {
			m.b.EncryptBlocks(out, win)
			c := src[i] ^ out[0]
			dst[i] = c
			copy(win, win[1:])
			win[bs-1] = c
		}
		return
	}
	for len(src) > 0 {
		n := min(len(src), cfb8Batch)
		copy(m.hist, m.reg[:bs])
		copy(m.hist[bs:], src[:n])
		w := m.windows[:n*bs]
		for i := 0; i < n; i++ {
			copy(w[i*bs:], m.hist[i:i+bs])
		}
		m.b.EncryptBlocks(w, w)
		for i := 0; i < n; i++ {
			dst[i] = src[i] ^ w[i*bs]
		}
		copy(m.reg[:bs], m.hist[n:n+bs])
		dst, src = dst[n:], src[n:]
	}
}

func (m *cfb8) wipe() { clear(m.reg); clear(m.windows); clear(m.hist); wipeBlock(m.b) }
