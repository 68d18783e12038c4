package argon2

import (
	"encoding/binary"
	"hash"

	"golang.org/x/crypto/blake2b"
)

func newBlake2b(size int) hash.Hash {
	h, err := blake2b.New(size, nil)
	if err != nil {
		panic(err) // unreachable: 1 <= size <= 64 and no key
	}
	return h
}

// variableHash is H' of RFC 9106 section 3.3: BLAKE2b stretched to any
// output length by chaining 64-byte digests and keeping 32 bytes of each.
func variableHash(outLen uint32, in []byte) []byte {
	out := make([]byte, outLen)
	var le [4]byte
	binary.LittleEndian.PutUint32(le[:], outLen)
	if outLen <= 64 {
		h := newBlake2b(int(outLen))
		h.Write(le[:])
		h.Write(in)
		h.Sum(out[:0])
		return out
	}
	h := newBlake2b(64)
	h.Write(le[:])
	h.Write(in)
	var v [64]byte
	h.Sum(v[:0])
	copy(out, v[:32])
	pos := uint32(32)
	for outLen-pos > 64 {
		h.Reset()
		h.Write(v[:])
		h.Sum(v[:0])
		copy(out[pos:], v[:32])
		pos += 32
	}
	last := newBlake2b(int(outLen - pos))
	last.Write(v[:])
	last.Sum(out[pos:pos])
	clear(v[:])
	return out
}
