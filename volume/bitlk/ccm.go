package bitlk

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"errors"
)

// BitLocker protects every key it stores (VMKs, the FVEK, the metadata
// digest) with AES-CCM (NIST SP 800-38C, RFC 3610): a 12-byte nonce, a
// 16-byte tag, no associated data. The standard library has no CCM, and
// the few bytes involved do not justify a dependency.

var errCCMAuth = errors.New("AES-CCM authentication failed")

// ccm is CCM over one AES key, for nonces of 7 to 13 bytes and tags of
// 4 to 16 bytes (even), with optional associated data, as SP 800-38C
// defines it; BitLocker uses 12-byte nonces and 16-byte tags only, the
// rest is there so the published test vectors apply.
type ccm struct {
	b        cipher.Block
	nonceLen int
	tagLen   int
}

func newCCM(key []byte, nonceLen, tagLen int) (*ccm, error) {
	if nonceLen < 7 || nonceLen > 13 || tagLen < 4 || tagLen > 16 || tagLen%2 != 0 {
		return nil, errors.New("AES-CCM: unsupported nonce or tag length")
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return &ccm{b: b, nonceLen: nonceLen, tagLen: tagLen}, nil
}

// lenSize is q in SP 800-38C: the bytes of the message length field.
func (c *ccm) lenSize() int { return 15 - c.nonceLen }

// counter returns counter block i (A_i) for the nonce.
func (c *ccm) counter(nonce []byte, i uint64, a *[16]byte) {
	q := c.lenSize()
	a[0] = byte(q - 1)
	copy(a[1:], nonce)
	for k := 15; k > c.nonceLen; k-- {
		a[k] = byte(i)
		i >>= 8
	}
}

// ctr XORs src with the key stream S_1, S_2, ... into dst.
func (c *ccm) ctr(dst, src, nonce []byte) {
	var a, s [16]byte
	for i := 0; len(src) > 0; i++ {
		c.counter(nonce, uint64(i+1), &a)
		c.b.Encrypt(s[:], a[:])
		n := subtle.XORBytes(dst, src, s[:])
		dst, src = dst[n:], src[n:]
	}
}

// mac is the CBC-MAC of B_0, the formatted associated data and the
// plaintext (SP 800-38C appendix A).
func (c *ccm) mac(nonce, plain, adata []byte) [16]byte {
	var x, blk [16]byte
	q := c.lenSize()
	x[0] = byte((c.tagLen-2)/2<<3 | (q - 1))
	if len(adata) > 0 {
		x[0] |= 0x40
	}
	copy(x[1:], nonce)
	n := uint64(len(plain))
	for k := 15; k > c.nonceLen; k-- {
		x[k] = byte(n)
		n >>= 8
	}
	c.b.Encrypt(x[:], x[:])
	absorb := func(p []byte) {
		for len(p) > 0 {
			clear(blk[:])
			k := copy(blk[:], p)
			p = p[k:]
			subtle.XORBytes(x[:], x[:], blk[:])
			c.b.Encrypt(x[:], x[:])
		}
	}
	if len(adata) > 0 {
		// Associated data shorter than 2^16-2^8 bytes is prefixed with
		// its 2-byte length; longer needs 0xfffe and 4 bytes.
		var hdr []byte
		if len(adata) < 0xff00 {
			hdr = []byte{byte(len(adata) >> 8), byte(len(adata))}
		} else {
			l := uint32(len(adata))
			hdr = []byte{0xff, 0xfe, byte(l >> 24), byte(l >> 16), byte(l >> 8), byte(l)}
		}
		a := append(hdr, adata...)
		absorb(a)
	}
	absorb(plain)
	return x
}

// open checks and decrypts ciphertext||tag into dst (len(ct)-tagLen
// bytes), the layout of SP 800-38C. Nothing is left in dst on failure.
func (c *ccm) open(dst, nonce, ct, adata []byte) error {
	if len(nonce) != c.nonceLen || len(ct) < c.tagLen || len(dst) < len(ct)-c.tagLen {
		return errCCMAuth
	}
	body, tag := ct[:len(ct)-c.tagLen], ct[len(ct)-c.tagLen:]
	dst = dst[:len(body)]
	c.ctr(dst, body, nonce)
	t := c.mac(nonce, dst, adata)
	var a, s0 [16]byte
	c.counter(nonce, 0, &a)
	c.b.Encrypt(s0[:], a[:])
	subtle.XORBytes(t[:], t[:], s0[:])
	if subtle.ConstantTimeCompare(t[:c.tagLen], tag) != 1 {
		clear(dst)
		return errCCMAuth
	}
	return nil
}

// seal encrypts plain and appends the tag: ciphertext||tag.
func (c *ccm) seal(nonce, plain, adata []byte) []byte {
	t := c.mac(nonce, plain, adata)
	var a, s0 [16]byte
	c.counter(nonce, 0, &a)
	c.b.Encrypt(s0[:], a[:])
	subtle.XORBytes(t[:], t[:], s0[:])
	out := make([]byte, len(plain), len(plain)+c.tagLen)
	c.ctr(out, plain, nonce)
	return append(out, t[:c.tagLen]...)
}

// openKey decrypts a BitLocker AES-CCM datum: nonce (12 bytes), then the
// encrypted tag (16), then the ciphertext, which BitLocker stores with its
// tag first.
func openKey(key []byte, d *ccmDatum) ([]byte, error) {
	c, err := newCCM(key, 12, 16)
	if err != nil {
		return nil, err
	}
	ct := make([]byte, 0, len(d.ct)+16)
	ct = append(append(ct, d.ct...), d.tag[:]...)
	out := make([]byte, len(d.ct))
	if err := c.open(out, d.nonce[:], ct, nil); err != nil {
		return nil, err
	}
	return out, nil
}
