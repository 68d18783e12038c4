// Package whirlpool implements the Whirlpool hash function in its final
// (2003) form, the one standardised in ISO/IEC 10118-3:2004 and used by
// TrueCrypt, VeraCrypt and cryptsetup.
//
// The Digest type holds no pointers, so a copy of a Digest is an independent
// snapshot of the hash state; PBKDF2 relies on that to resume precomputed
// HMAC states without re-hashing the key blocks.
package whirlpool

import (
	"encoding/binary"
	"hash"
)

const (
	// Size is the length of a Whirlpool digest in bytes.
	Size = 64
	// BlockSize is the block length of Whirlpool in bytes.
	BlockSize = 64
)

// Digest is the running state of a Whirlpool computation. Its zero value is
// not ready for use: call Reset or use New.
type Digest struct {
	h   [8]uint64
	buf [BlockSize]byte
	n   int    // bytes waiting in buf
	len uint64 // message length in bytes (Whirlpool allows 2^256 bits; 2^64 bytes is plenty here)
}

// New returns a new Whirlpool hash.
func New() *Digest {
	d := new(Digest)
	d.Reset()
	return d
}

var _ hash.Hash = (*Digest)(nil)

// Reset restores the initial (all-zero) state.
func (d *Digest) Reset() { *d = Digest{} }

// Size returns Size.
func (d *Digest) Size() int { return Size }

// BlockSize returns BlockSize.
func (d *Digest) BlockSize() int { return BlockSize }

// Write absorbs p. It never fails.
func (d *Digest) Write(p []byte) (int, error) {
	n := len(p)
	d.len += uint64(n)
	if d.n > 0 {
		c := copy(d.buf[d.n:], p)
		d.n += c
		p = p[c:]
		if d.n < BlockSize {
			return n, nil
		}
		block(&d.h, d.buf[:])
		d.n = 0
	}
	if len(p) >= BlockSize {
		full := len(p) &^ (BlockSize - 1)
		block(&d.h, p[:full])
		p = p[full:]
	}
	d.n = copy(d.buf[:], p)
	return n, nil
}

// Sum appends the digest of the data written so far to b. It does not
// change the running state.
func (d *Digest) Sum(b []byte) []byte {
	c := *d
	var out [Size]byte
	c.finish(&out)
	return append(b, out[:]...)
}

// finish pads the message (a 1 bit, zeros, and the 256-bit big-endian bit
// length) and writes the final chaining value to out.
func (d *Digest) finish(out *[Size]byte) {
	bits := d.len << 3
	bitsHi := d.len >> 61
	d.buf[d.n] = 0x80
	d.n++
	if d.n > BlockSize-32 {
		clear(d.buf[d.n:])
		block(&d.h, d.buf[:])
		d.n = 0
	}
	clear(d.buf[d.n : BlockSize-16])
	binary.BigEndian.PutUint64(d.buf[BlockSize-16:], bitsHi)
	binary.BigEndian.PutUint64(d.buf[BlockSize-8:], bits)
	block(&d.h, d.buf[:])
	for i, v := range d.h {
		binary.BigEndian.PutUint64(out[8*i:], v)
	}
}

// Sum returns the Whirlpool digest of data.
func Sum(data []byte) [Size]byte {
	var d Digest
	d.Write(data)
	var out [Size]byte
	d.finish(&out)
	return out
}

// Compress runs the compression function on one block given as its eight
// big-endian 64-bit words, updating the chaining value h. It lets a caller
// that hashes fixed-length messages over and over (PBKDF2's HMAC chains)
// keep the state as words and pad the message itself, with no buffering
// and no byte conversions.
func Compress(h, m *[8]uint64) { blockWords(h, m) }

// Compress2 is two independent Compress calls, faster than two calls
// where the CPU can interleave them (AVX-512 with GFNI).
func Compress2(h1, m1, h2, m2 *[8]uint64) { blockWords2(h1, m1, h2, m2) }
