package kdf

import (
	"crypto/subtle"
	"encoding"
	"hash"
)

// marshalPRF serves hashes that can save and restore their state through
// encoding.BinaryMarshaler (the standard library's SHA-1/2 and MD5, and
// x/crypto's BLAKE2s): restoring parses a few words into the existing
// object, so the hash's own (assembly) block function does the work.
type marshalPRF struct {
	newHash      func() hash.Hash
	h            hash.Hash
	restore      encoding.BinaryUnmarshaler
	inner, outer []byte
	n            int
}

func newMarshalPRF(newHash func() hash.Hash, key []byte) *marshalPRF {
	probe := newHash()
	if _, ok := probe.(encoding.BinaryMarshaler); !ok {
		return nil
	}
	if _, ok := probe.(encoding.BinaryUnmarshaler); !ok {
		return nil
	}
	ipad, opad := hmacPads(newHash, key)
	defer wipeBytes(ipad)
	defer wipeBytes(opad)
	snapshot := func(pad []byte) []byte {
		h := newHash()
		h.Write(pad)
		b, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return nil
		}
		return b
	}
	p := &marshalPRF{newHash: newHash, inner: snapshot(ipad), outer: snapshot(opad), n: probe.Size()}
	if p.inner == nil || p.outer == nil {
		return nil
	}
	p.h = probe
	p.restore = probe.(encoding.BinaryUnmarshaler)
	return p
}

func (p *marshalPRF) size() int { return p.n }

func (p *marshalPRF) mac(dst, msg []byte) {
	p.restore.UnmarshalBinary(p.inner)
	p.h.Write(msg)
	p.h.Sum(dst[:0])
	p.restore.UnmarshalBinary(p.outer)
	p.h.Write(dst)
	p.h.Sum(dst[:0])
}

func (p *marshalPRF) chain(u, acc []byte, n int) {
	h, restore := p.h, p.restore
	for ; n > 0; n-- {
		restore.UnmarshalBinary(p.inner)
		h.Write(u)
		h.Sum(u[:0])
		restore.UnmarshalBinary(p.outer)
		h.Write(u)
		h.Sum(u[:0])
		subtle.XORBytes(acc, acc, u)
	}
}

func (p *marshalPRF) clone() prf {
	c := *p
	c.inner = append([]byte(nil), p.inner...)
	c.outer = append([]byte(nil), p.outer...)
	c.h = p.newHash()
	c.restore = c.h.(encoding.BinaryUnmarshaler)
	return &c
}

func (p *marshalPRF) wipe() {
	wipeBytes(p.inner)
	wipeBytes(p.outer)
	p.h.Reset()
}
