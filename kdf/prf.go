package kdf

import (
	"hash"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/hashes/ripemd160"
	"github.com/cryptvol/cryptvol/hashes/streebog"
)

// prf is HMAC keyed with one password, with the key blocks (K xor ipad and
// K xor opad) already absorbed. PBKDF2 spends all its time in chain, which
// per iteration only resumes the two saved states and runs the compressions
// that the message and padding need, allocating nothing.
type prf interface {
	// size is the HMAC output length.
	size() int
	// mac sets dst (len size) to HMAC(msg). dst may alias msg.
	mac(dst, msg []byte)
	// chain runs n PBKDF2 iterations: u = HMAC(u); acc ^= u.
	chain(u, acc []byte, n int)
	// clone returns an independent copy for another goroutine.
	clone() prf
	// wipe overwrites the keyed states.
	wipe()
}

// pairPRF is a prf that runs two chains faster together than one after
// the other (Whirlpool and Streebog-512, whose compressions interleave).
type pairPRF interface {
	prf
	// chain2 is chain on two chains at once.
	chain2(u1, acc1, u2, acc2 []byte, n int)
}

// hmacPads returns K xor ipad and K xor opad for key, hashing a key longer
// than the block size first (RFC 2104).
func hmacPads(newHash func() hash.Hash, key []byte) (ipad, opad []byte) {
	h := newHash()
	bs := h.BlockSize()
	if len(key) > bs {
		h.Write(key)
		key = h.Sum(nil)
	}
	ipad = make([]byte, bs)
	opad = make([]byte, bs)
	copy(ipad, key)
	copy(opad, key)
	for i := range ipad {
		ipad[i] ^= 0x36
		opad[i] ^= 0x5c
	}
	return ipad, opad
}

func wipeBytes(b []byte) { clear(b) }

// newPRF picks the fastest implementation for spec: word-level loops on
// the compression function for Whirlpool and Streebog-512 (prf_words.go),
// a plain struct copy of the saved states for this module's other hashes, encoding.BinaryMarshaler
// snapshots for the standard library's (so its assembly runs), and
// crypto/hmac as the fallback for any other hash.
func newPRF(spec hashes.Spec, password []byte) prf {
	switch spec.Name {
	case hashes.Whirlpool:
		return newWhirlpoolPRF(password)
	case hashes.Streebog:
		return newStreebogPRF(password)
	case hashes.Streebog256:
		return newValuePRF[streebog.Digest](func() *streebog.Digest { return streebog.New256() }, password)
	case hashes.RIPEMD160:
		return newValuePRF[ripemd160.Digest](func() *ripemd160.Digest { return ripemd160.New() }, password)
	case hashes.BLAKE2s256:
		if p := newBLAKE2sPRF(spec.New, password); p != nil {
			return p
		}
	}
	if p := newMarshalPRF(spec.New, password); p != nil {
		return p
	}
	return newHMACPRF(spec.New, password)
}
