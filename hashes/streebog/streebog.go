// Package streebog implements the GOST R 34.11-2012 hash function
// ("Streebog", RFC 6986) with 512- and 256-bit output, as VeraCrypt uses it
// for HMAC-Streebog (512 bits) in PBKDF2.
//
// GOST writes numbers most significant byte first but hashes byte strings
// least significant byte first: the byte string hashed here is the RFC's
// printed message reversed, and the digest returned is the RFC's printed
// result reversed. That is the order every implementation that interoperates
// (VeraCrypt, OpenSSL's gost engine, botan) uses.
//
// The Digest type holds no pointers, so a copy is an independent snapshot.
package streebog

import (
	"encoding/binary"
	"hash"
)

const (
	// Size is the length of a Streebog-512 digest in bytes.
	Size = 64
	// Size256 is the length of a Streebog-256 digest in bytes.
	Size256 = 32
	// BlockSize is the block length of Streebog in bytes.
	BlockSize = 64
)

// Digest is the running state of a Streebog computation.
type Digest struct {
	h     [8]uint64 // chaining value
	sigma [8]uint64 // sum of all blocks modulo 2^512
	n     uint64    // message length processed so far, in bits (2^64 bits is far beyond any use here)
	buf   [BlockSize]byte
	nbuf  int
	size  int // 64 or 32
}

var _ hash.Hash = (*Digest)(nil)

// New returns a Streebog-512 hash.
func New() *Digest {
	d := &Digest{size: Size}
	d.Reset()
	return d
}

// New256 returns a Streebog-256 hash.
func New256() *Digest {
	d := &Digest{size: Size256}
	d.Reset()
	return d
}

// Reset restores the initial state: IV = 0^512 for Streebog-512 and
// (00000001)^64 for Streebog-256.
func (d *Digest) Reset() {
	size := d.size
	if size == 0 {
		size = Size
	}
	*d = Digest{size: size}
	if size == Size256 {
		for i := range d.h {
			d.h[i] = 0x0101010101010101
		}
	}
}

// Size returns the digest length in bytes.
func (d *Digest) Size() int { return d.size }

// BlockSize returns BlockSize.
func (d *Digest) BlockSize() int { return BlockSize }

// Write absorbs p. It never fails.
func (d *Digest) Write(p []byte) (int, error) {
	n := len(p)
	if d.nbuf > 0 {
		c := copy(d.buf[d.nbuf:], p)
		d.nbuf += c
		p = p[c:]
		if d.nbuf < BlockSize {
			return n, nil
		}
		d.fullBlock(d.buf[:])
		d.nbuf = 0
	}
	for len(p) >= BlockSize {
		d.fullBlock(p[:BlockSize])
		p = p[BlockSize:]
	}
	d.nbuf = copy(d.buf[:], p)
	return n, nil
}

// fullBlock runs stage 2 of the algorithm on one 512-bit block.
func (d *Digest) fullBlock(p []byte) {
	var m [8]uint64
	for i := range m {
		m[i] = binary.LittleEndian.Uint64(p[8*i:])
	}
	compress(&d.h, &m, d.n)
	d.n += 512
	addMod512(&d.sigma, &m)
}

// addMod512 adds b to a modulo 2^512 (little-endian words).
func addMod512(a, b *[8]uint64) {
	var carry uint64
	for i := range a {
		s := a[i] + b[i]
		c1 := uint64(0)
		if s < a[i] {
			c1 = 1
		}
		s2 := s + carry
		if s2 < s {
			c1 = 1
		}
		a[i] = s2
		carry = c1
	}
}

// Sum appends the digest of the data written so far to b. It does not
// change the running state.
func (d *Digest) Sum(b []byte) []byte {
	c := *d
	var out [Size]byte
	c.finish(&out)
	return append(b, out[Size-d.size:]...)
}

// finish runs stage 3: pad the tail with a single 1 bit, hash it with the
// running length, then fold in the length and the checksum.
func (d *Digest) finish(out *[Size]byte) {
	var m [8]uint64
	clear(d.buf[d.nbuf:])
	d.buf[d.nbuf] = 0x01
	for i := range m {
		m[i] = binary.LittleEndian.Uint64(d.buf[8*i:])
	}
	compress(&d.h, &m, d.n)
	d.n += uint64(d.nbuf) * 8
	addMod512(&d.sigma, &m)
	length := [8]uint64{d.n}
	compress(&d.h, &length, 0)
	compress(&d.h, &d.sigma, 0)
	for i, v := range d.h {
		binary.LittleEndian.PutUint64(out[8*i:], v)
	}
}

// Sum512 returns the Streebog-512 digest of data.
func Sum512(data []byte) [Size]byte {
	d := New()
	d.Write(data)
	var out [Size]byte
	d.finish(&out)
	return out
}

// Sum256 returns the Streebog-256 digest of data.
func Sum256(data []byte) [Size256]byte {
	d := New256()
	d.Write(data)
	var full [Size]byte
	d.finish(&full)
	var out [Size256]byte
	copy(out[:], full[Size-Size256:])
	return out
}

// Compress runs the compression function g_N on one block given as its
// eight little-endian 64-bit words, with N = n (the message length hashed
// before this block, in bits), updating the chaining value h. It lets a
// caller that hashes fixed-length messages over and over (PBKDF2's HMAC
// chains) keep the state as words and run stage 3 itself, with no
// buffering and no byte conversions.
func Compress(h, m *[8]uint64, n uint64) { compress(h, m, n) }

// Compress2 is two independent Compress calls with the same n, faster
// than two calls where the CPU can interleave them (AVX-512 with GFNI).
func Compress2(h1, m1, h2, m2 *[8]uint64, n uint64) { compress2(h1, m1, h2, m2, n) }
