package kdf

import (
	"bytes"
	"crypto/hmac"
	"encoding"
	"hash"
)

// BLAKE2 never compresses a full block until more input arrives (the last
// block is compressed differently), so a state saved right after the
// 64-byte HMAC key block still holds that block uncompressed, and every
// iteration would compress it again: four compressions per HMAC instead
// of two. newBLAKE2sPRF saves instead the state after the key block was
// compressed, with an empty buffer: it writes one extra byte (forcing the
// compression), marshals, and empties the buffer by zeroing the trailing
// buffer-length byte of x/crypto's marshalled form.
//
// That relies on the private layout of golang.org/x/crypto/blake2s's
// MarshalBinary, so the result is checked against crypto/hmac at
// construction; if the layout ever changes, the plain snapshot is used.
func newBLAKE2sPRF(newHash func() hash.Hash, key []byte) prf {
	p := newMarshalPRF(newHash, key)
	if p == nil {
		return nil
	}
	ipad, opad := hmacPads(newHash, key)
	defer wipeBytes(ipad)
	defer wipeBytes(opad)
	compressed := func(pad []byte) []byte {
		h := newHash()
		h.Write(pad)
		h.Write([]byte{0})
		b, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil || len(b) == 0 || b[len(b)-1] != 1 {
			return nil
		}
		b[len(b)-1] = 0
		return b
	}
	fast := &marshalPRF{newHash: newHash, h: newHash(), inner: compressed(ipad), outer: compressed(opad), n: p.n}
	if fast.inner == nil || fast.outer == nil {
		return p
	}
	fast.restore = fast.h.(encoding.BinaryUnmarshaler)
	// Self-check against the standard HMAC on a message of the length
	// PBKDF2 feeds (the digest) and on a salt-like one.
	for _, msg := range [][]byte{make([]byte, p.n), []byte("self-check salt and block index")} {
		ref := hmac.New(newHash, key)
		ref.Write(msg)
		want := ref.Sum(nil)
		got := make([]byte, p.n)
		if fast.restore.UnmarshalBinary(fast.inner) != nil || fast.restore.UnmarshalBinary(fast.outer) != nil {
			return p
		}
		fast.mac(got, msg)
		if !bytes.Equal(got, want) {
			return p
		}
	}
	p.wipe()
	return fast
}
