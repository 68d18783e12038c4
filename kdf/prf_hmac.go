package kdf

import (
	"crypto/hmac"
	"crypto/subtle"
	"hash"
)

// hmacPRF is the generic fallback through crypto/hmac.
type hmacPRF struct {
	newHash func() hash.Hash
	key     []byte
	m       hash.Hash
}

func newHMACPRF(newHash func() hash.Hash, key []byte) *hmacPRF {
	k := append([]byte(nil), key...)
	return &hmacPRF{newHash: newHash, key: k, m: hmac.New(newHash, k)}
}

func (p *hmacPRF) size() int { return p.m.Size() }

func (p *hmacPRF) mac(dst, msg []byte) {
	p.m.Reset()
	p.m.Write(msg)
	p.m.Sum(dst[:0])
}

func (p *hmacPRF) chain(u, acc []byte, n int) {
	for ; n > 0; n-- {
		p.mac(u, u)
		subtle.XORBytes(acc, acc, u)
	}
}

func (p *hmacPRF) clone() prf { return newHMACPRF(p.newHash, p.key) }

func (p *hmacPRF) wipe() { wipeBytes(p.key); p.m.Reset() }
