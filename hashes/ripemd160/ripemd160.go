// Package ripemd160 implements the RIPEMD-160 hash function (Dobbertin,
// Bosselaers, Preneel 1996), used by TrueCrypt and VeraCrypt before 1.26 as
// the PRF of PBKDF2.
//
// golang.org/x/crypto/ripemd160 exists (and is the differential oracle in
// the tests), but it neither exposes a cheap state snapshot nor unrolls the
// compression function; PBKDF2 with 655,331 iterations needs both. The
// Digest type holds no pointers, so a copy is an independent snapshot.
package ripemd160

import (
	"encoding/binary"
	"hash"
)

const (
	// Size is the length of a RIPEMD-160 digest in bytes.
	Size = 20
	// BlockSize is the block length of RIPEMD-160 in bytes.
	BlockSize = 64
)

// Digest is the running state of a RIPEMD-160 computation.
type Digest struct {
	h   [5]uint32
	buf [BlockSize]byte
	n   int
	len uint64
}

var _ hash.Hash = (*Digest)(nil)

// New returns a new RIPEMD-160 hash.
func New() *Digest {
	d := new(Digest)
	d.Reset()
	return d
}

// Reset restores the initial chaining value.
func (d *Digest) Reset() {
	*d = Digest{h: IV}
}

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

// Sum appends the digest of the data written so far to b without changing
// the running state.
func (d *Digest) Sum(b []byte) []byte {
	c := *d
	var out [Size]byte
	c.finish(&out)
	return append(b, out[:]...)
}

// finish applies MD-style padding: 0x80, zeros, 64-bit little-endian bit
// length.
func (d *Digest) finish(out *[Size]byte) {
	bits := d.len << 3
	d.buf[d.n] = 0x80
	d.n++
	if d.n > BlockSize-8 {
		clear(d.buf[d.n:])
		block(&d.h, d.buf[:])
		d.n = 0
	}
	clear(d.buf[d.n : BlockSize-8])
	binary.LittleEndian.PutUint64(d.buf[BlockSize-8:], bits)
	block(&d.h, d.buf[:])
	for i, v := range d.h {
		binary.LittleEndian.PutUint32(out[4*i:], v)
	}
}

// Sum returns the RIPEMD-160 digest of data.
func Sum(data []byte) [Size]byte {
	d := New()
	d.Write(data)
	var out [Size]byte
	d.finish(&out)
	return out
}
