package archive

import (
	"crypto/sha256"
	"encoding"
	"hash"
	"sync"
)

// expander computes HKDF-SHA-256-Expand(prk, info, 32) -- a single HMAC-
// SHA-256 of info||0x01 -- from precomputed inner and outer HMAC states, so
// deriving a record's key costs two SHA-256 compressions and no
// allocation instead of crypto/hkdf's four and several. The spec test
// checks it against crypto/hkdf.
type expander struct {
	inner, outer []byte // marshalled SHA-256 states after the ipad/opad block
}

var sha256Pool = sync.Pool{New: func() any { return sha256.New() }}

func newExpander(prk []byte) *expander {
	var pad [sha256.BlockSize]byte
	copy(pad[:], prk) // prk is 32 bytes: never hashed down
	h := sha256.New()
	state := func(x byte) []byte {
		var p [sha256.BlockSize]byte
		for i := range p {
			p[i] = pad[i] ^ x
		}
		h.Reset()
		h.Write(p[:])
		s, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			panic(err)
		}
		return s
	}
	e := &expander{inner: state(0x36), outer: state(0x5c)}
	clear(pad[:])
	return e
}

// expand writes HKDF-Expand(prk, prefix||r, 32) to dst.
func (e *expander) expand(dst *[32]byte, prefix string, r []byte) {
	h := sha256Pool.Get().(hash.Hash)
	u := h.(encoding.BinaryUnmarshaler)
	if err := u.UnmarshalBinary(e.inner); err != nil {
		panic(err)
	}
	var buf [sha256.Size + 1]byte
	writeString(h, prefix)
	h.Write(r)
	buf[0] = 1
	h.Write(buf[:1])
	sum := h.Sum(buf[:0])
	if err := u.UnmarshalBinary(e.outer); err != nil {
		panic(err)
	}
	h.Write(sum)
	h.Sum(dst[:0])
	sha256Pool.Put(h)
}

func writeString(h hash.Hash, s string) {
	if sw, ok := h.(interface{ WriteString(string) (int, error) }); ok {
		sw.WriteString(s)
		return
	}
	h.Write([]byte(s))
}

func (e *expander) wipe() {
	clear(e.inner)
	clear(e.outer)
}
