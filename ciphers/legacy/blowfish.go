package legacy

import (
	"encoding/binary"
	"fmt"
)

//go:generate go run gen_blowfish_pi.go

// Blowfish key lengths accepted here, in bytes: 32 to 448 bits, the range
// OpenSSL, the Linux kernel and TrueCrypt use.
const (
	BlowfishMinKeySize = 4
	BlowfishMaxKeySize = 56
)

// blowfish is the cipher of Schneier's 1993 paper: 16 Feistel rounds with
// F(x) = ((S0[a] + S1[b]) ^ S2[c]) + S3[d] over the bytes a..d of x, and a
// key schedule that encrypts with the pi-initialised P-array and S-boxes
// to replace them. It is written here (rather than wrapping
// golang.org/x/crypto/blowfish, whose state is not reachable) so that
// blocks can run four at a time.
type blowfish struct {
	p [18]uint32
	s [4][256]uint32
}

func newBlowfish(key []byte) (*blowfish, error) {
	if len(key) < BlowfishMinKeySize || len(key) > BlowfishMaxKeySize {
		return nil, fmt.Errorf("blowfish: invalid key size %d (want %d to %d bytes)",
			len(key), BlowfishMinKeySize, BlowfishMaxKeySize)
	}
	c := &blowfish{}
	copy(c.p[:], blowfishPi[:18])
	for i := range c.s {
		copy(c.s[i][:], blowfishPi[18+256*i:18+256*(i+1)])
	}
	// XOR the key, cycled and read big-endian, into the P-array.
	j := 0
	for i := range c.p {
		var w uint32
		for range 4 {
			w = w<<8 | uint32(key[j])
			j = (j + 1) % len(key)
		}
		c.p[i] ^= w
	}
	// Encrypt the all-zero block, chaining, and let each output replace
	// the next two words of P, then of the S-boxes.
	var l, r uint32
	for i := 0; i < 18; i += 2 {
		l, r = c.encrypt(l, r)
		c.p[i], c.p[i+1] = l, r
	}
	for i := range c.s {
		for k := 0; k < 256; k += 2 {
			l, r = c.encrypt(l, r)
			c.s[i][k], c.s[i][k+1] = l, r
		}
	}
	return c, nil
}

func (c *blowfish) f(x uint32) uint32 {
	return ((c.s[0][x>>24] + c.s[1][byte(x>>16)]) ^ c.s[2][byte(x>>8)]) + c.s[3][byte(x)]
}

// encrypt is one block, for the key schedule and the tails.
func (c *blowfish) encrypt(l, r uint32) (uint32, uint32) {
	l ^= c.p[0]
	for i := 1; i < 17; i += 2 {
		r ^= c.f(l) ^ c.p[i]
		l ^= c.f(r) ^ c.p[i+1]
	}
	return r ^ c.p[17], l
}

func (c *blowfish) decrypt(l, r uint32) (uint32, uint32) {
	l ^= c.p[17]
	for i := 16; i > 0; i -= 2 {
		r ^= c.f(l) ^ c.p[i]
		l ^= c.f(r) ^ c.p[i-1]
	}
	return r ^ c.p[0], l
}

// crypt runs len(src)/8 blocks four at a time: a round is a chain of four
// S-box loads, and four independent chains keep the core busy while each
// waits on its loads (one at a time, as x/crypto does, ran at 0.92-0.96x
// OpenSSL's bf-ecb on the reference amd64 machine). The block halves are
// big-endian for standard Blowfish, little-endian (le) for TrueCrypt's.
func (c *blowfish) crypt(dst, src []byte, decrypt, le bool) {
	order := halfOrder{le}
	n := len(src) / BlockSize * BlockSize
	first, step, last := 0, 1, 17
	if decrypt {
		first, step, last = 17, -1, 0
	}
	i := 0
	for ; i+4*BlockSize <= n; i += 4 * BlockSize {
		s, d := src[i:i+32], dst[i:i+32]
		k := c.p[first]
		l0, r0 := order.Uint32(s[0:4])^k, order.Uint32(s[4:8])
		l1, r1 := order.Uint32(s[8:12])^k, order.Uint32(s[12:16])
		l2, r2 := order.Uint32(s[16:20])^k, order.Uint32(s[20:24])
		l3, r3 := order.Uint32(s[24:28])^k, order.Uint32(s[28:32])
		for j := first + step; j != last; j += 2 * step {
			k1, k2 := c.p[j], c.p[j+step]
			r0 ^= c.f(l0) ^ k1
			r1 ^= c.f(l1) ^ k1
			r2 ^= c.f(l2) ^ k1
			r3 ^= c.f(l3) ^ k1
			l0 ^= c.f(r0) ^ k2
			l1 ^= c.f(r1) ^ k2
			l2 ^= c.f(r2) ^ k2
			l3 ^= c.f(r3) ^ k2
		}
		k = c.p[last]
		order.PutUint32(d[0:4], r0^k)
		order.PutUint32(d[4:8], l0)
		order.PutUint32(d[8:12], r1^k)
		order.PutUint32(d[12:16], l1)
		order.PutUint32(d[16:20], r2^k)
		order.PutUint32(d[20:24], l2)
		order.PutUint32(d[24:28], r3^k)
		order.PutUint32(d[28:32], l3)
	}
	for ; i < n; i += BlockSize {
		l, r := order.Uint32(src[i:i+4]), order.Uint32(src[i+4:i+8])
		if decrypt {
			l, r = c.decrypt(l, r)
		} else {
			l, r = c.encrypt(l, r)
		}
		order.PutUint32(dst[i:i+4], l)
		order.PutUint32(dst[i+4:i+8], r)
	}
}

// halfOrder reads and writes a block's 32-bit halves in either byte order
// with calls the compiler inlines (a binary.ByteOrder interface would cost
// a call per half).
type halfOrder struct{ le bool }

func (o halfOrder) Uint32(b []byte) uint32 {
	if o.le {
		return binary.LittleEndian.Uint32(b)
	}
	return binary.BigEndian.Uint32(b)
}

func (o halfOrder) PutUint32(b []byte, v uint32) {
	if o.le {
		binary.LittleEndian.PutUint32(b, v)
	} else {
		binary.BigEndian.PutUint32(b, v)
	}
}

// BlowfishBE is standard Blowfish (Schneier 1993): each 8-byte block is two
// big-endian 32-bit halves. This is OpenSSL's "bf" and the Linux kernel's
// "blowfish", used by LUKS.
type BlowfishBE struct {
	c *blowfish
}

// NewBlowfishBE returns standard Blowfish keyed with a 4- to 56-byte key.
func NewBlowfishBE(key []byte) (*BlowfishBE, error) {
	c, err := newBlowfish(key)
	if err != nil {
		return nil, err
	}
	return &BlowfishBE{c}, nil
}

// BlockSize returns 8.
func (b *BlowfishBE) BlockSize() int { return BlockSize }

// EncryptBlocks encrypts len(src)/8 blocks from src into dst.
func (b *BlowfishBE) EncryptBlocks(dst, src []byte) {
	checkLengths("blowfish", dst, src)
	b.c.crypt(dst, src, false, false)
}

// DecryptBlocks decrypts len(src)/8 blocks from src into dst.
func (b *BlowfishBE) DecryptBlocks(dst, src []byte) {
	checkLengths("blowfish", dst, src)
	b.c.crypt(dst, src, true, false)
}

// BlowfishLE is TrueCrypt's Blowfish: the same cipher and the same key
// schedule as BlowfishBE, but each 8-byte block's two 32-bit halves are read
// and written little-endian. TrueCrypt's BlowfishEncryptLE loads the halves
// with LE32() while its BlowfishSetKey packs key bytes big-endian exactly as
// Schneier's reference does, and cryptsetup's "blowfish_le" reproduces it by
// byte-swapping each half around the kernel's big-endian Blowfish.
type BlowfishLE struct {
	c *blowfish
}

// NewBlowfishLE returns TrueCrypt's little-endian Blowfish keyed with a 4- to
// 56-byte key (TrueCrypt itself always used 56 bytes).
func NewBlowfishLE(key []byte) (*BlowfishLE, error) {
	c, err := newBlowfish(key)
	if err != nil {
		return nil, err
	}
	return &BlowfishLE{c}, nil
}

// BlockSize returns 8.
func (b *BlowfishLE) BlockSize() int { return BlockSize }

// EncryptBlocks encrypts len(src)/8 blocks from src into dst.
func (b *BlowfishLE) EncryptBlocks(dst, src []byte) {
	checkLengths("blowfish_le", dst, src)
	b.c.crypt(dst, src, false, true)
}

// DecryptBlocks decrypts len(src)/8 blocks from src into dst.
func (b *BlowfishLE) DecryptBlocks(dst, src []byte) {
	checkLengths("blowfish_le", dst, src)
	b.c.crypt(dst, src, true, true)
}
