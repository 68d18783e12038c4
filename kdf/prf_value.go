package kdf

import (
	"crypto/subtle"
	"hash"
)

// valuePRF serves hashes whose state is a pointer-free struct: resuming a
// saved HMAC state is a struct assignment.
type valuePRF[T any, P interface {
	*T
	hash.Hash
}] struct {
	inner, outer, work T
	n                  int
}

func newValuePRF[T any, P interface {
	*T
	hash.Hash
}](newHash func() P, key []byte) *valuePRF[T, P] {
	ipad, opad := hmacPads(func() hash.Hash { return newHash() }, key)
	defer wipeBytes(ipad)
	defer wipeBytes(opad)
	p := &valuePRF[T, P]{}
	h := newHash()
	h.Write(ipad)
	p.inner = *h
	h = newHash()
	h.Write(opad)
	p.outer = *h
	p.n = h.Size()
	return p
}

func (p *valuePRF[T, P]) size() int { return p.n }

func (p *valuePRF[T, P]) mac(dst, msg []byte) {
	w := P(&p.work)
	p.work = p.inner
	w.Write(msg)
	w.Sum(dst[:0])
	p.work = p.outer
	w.Write(dst)
	w.Sum(dst[:0])
}

func (p *valuePRF[T, P]) chain(u, acc []byte, n int) {
	w := P(&p.work)
	for ; n > 0; n-- {
		p.work = p.inner
		w.Write(u)
		w.Sum(u[:0])
		p.work = p.outer
		w.Write(u)
		w.Sum(u[:0])
		subtle.XORBytes(acc, acc, u)
	}
}

func (p *valuePRF[T, P]) clone() prf {
	c := *p
	return &c
}

func (p *valuePRF[T, P]) wipe() {
	var zero T
	p.inner, p.outer, p.work = zero, zero, zero
}
