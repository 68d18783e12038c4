package kdf

import (
	"encoding/binary"
	"hash"
	"math/bits"

	"github.com/cryptvol/cryptvol/hashes/streebog"
	"github.com/cryptvol/cryptvol/hashes/whirlpool"
)

// PBKDF2 with Whirlpool or Streebog-512 hashes a 64-byte message (the
// previous U) with HMAC, over and over: with the key blocks absorbed, an
// iteration is exactly one message block and a padding block known in
// advance, per hash. whirlpoolPRF and streebogPRF run that loop on the
// hash's compression function with the state as words and the padding
// and length blocks precomputed, instead of buffering and converting bytes
// through the hash.Hash interface; mac (the first U, of salt || INT(i),
// any length) takes the general path.

// whirlpoolPad is the padding block of a 128-byte message (key block and
// one message block): a 1 bit, zeros, and the 256-bit length 1024.
var whirlpoolPad = [8]uint64{1 << 63, 0, 0, 0, 0, 0, 0, 1024}

type whirlpoolPRF struct {
	*valuePRF[whirlpool.Digest, *whirlpool.Digest]
	inner, outer [8]uint64 // chaining values after K xor ipad, K xor opad
}

func newWhirlpoolPRF(password []byte) *whirlpoolPRF {
	p := &whirlpoolPRF{valuePRF: newValuePRF[whirlpool.Digest](func() *whirlpool.Digest { return whirlpool.New() }, password)}
	ipad, opad := hmacPads(func() hash.Hash { return whirlpool.New() }, password)
	defer wipeBytes(ipad)
	defer wipeBytes(opad)
	var m [8]uint64
	for i := range m {
		m[i] = binary.BigEndian.Uint64(ipad[8*i:])
	}
	whirlpool.Compress(&p.inner, &m)
	for i := range m {
		m[i] = binary.BigEndian.Uint64(opad[8*i:])
	}
	whirlpool.Compress(&p.outer, &m)
	clear(m[:])
	return p
}

func (p *whirlpoolPRF) chain(u, acc []byte, n int) {
	var uw, aw [8]uint64
	for i := range uw {
		uw[i] = binary.BigEndian.Uint64(u[8*i:])
		aw[i] = binary.BigEndian.Uint64(acc[8*i:])
	}
	for ; n > 0; n-- {
		h := p.inner
		whirlpool.Compress(&h, &uw)
		whirlpool.Compress(&h, &whirlpoolPad)
		uw = p.outer
		whirlpool.Compress(&uw, &h)
		whirlpool.Compress(&uw, &whirlpoolPad)
		for i := range aw {
			aw[i] ^= uw[i]
		}
	}
	for i := range uw {
		binary.BigEndian.PutUint64(u[8*i:], uw[i])
		binary.BigEndian.PutUint64(acc[8*i:], aw[i])
	}
	clear(uw[:])
	clear(aw[:])
}

// chain2 runs two chains at once, their compressions paired (Compress2).
func (p *whirlpoolPRF) chain2(u1, acc1, u2, acc2 []byte, n int) {
	var uw1, aw1, uw2, aw2 [8]uint64
	for i := range uw1 {
		uw1[i] = binary.BigEndian.Uint64(u1[8*i:])
		aw1[i] = binary.BigEndian.Uint64(acc1[8*i:])
		uw2[i] = binary.BigEndian.Uint64(u2[8*i:])
		aw2[i] = binary.BigEndian.Uint64(acc2[8*i:])
	}
	for ; n > 0; n-- {
		h1, h2 := p.inner, p.inner
		whirlpool.Compress2(&h1, &uw1, &h2, &uw2)
		whirlpool.Compress2(&h1, &whirlpoolPad, &h2, &whirlpoolPad)
		uw1, uw2 = p.outer, p.outer
		whirlpool.Compress2(&uw1, &h1, &uw2, &h2)
		whirlpool.Compress2(&uw1, &whirlpoolPad, &uw2, &whirlpoolPad)
		for i := range aw1 {
			aw1[i] ^= uw1[i]
			aw2[i] ^= uw2[i]
		}
	}
	for i := range uw1 {
		binary.BigEndian.PutUint64(u1[8*i:], uw1[i])
		binary.BigEndian.PutUint64(acc1[8*i:], aw1[i])
		binary.BigEndian.PutUint64(u2[8*i:], uw2[i])
		binary.BigEndian.PutUint64(acc2[8*i:], aw2[i])
	}
	clear(uw1[:])
	clear(aw1[:])
	clear(uw2[:])
	clear(aw2[:])
}

func (p *whirlpoolPRF) clone() prf {
	c := *p
	c.valuePRF = p.valuePRF.clone().(*valuePRF[whirlpool.Digest, *whirlpool.Digest])
	return &c
}

func (p *whirlpoolPRF) wipe() {
	p.valuePRF.wipe()
	clear(p.inner[:])
	clear(p.outer[:])
}

// streebogHMAC is one keyed Streebog-512 state for 64-byte messages: the
// chaining value after the key block, and the checksum Σ of the key
// block and the padding block (0x01 then zeros) that every message gets.
type streebogHMAC struct {
	h, sigma [8]uint64
}

func newStreebogHMAC(pad []byte) streebogHMAC {
	var s streebogHMAC
	for i := range s.sigma {
		s.sigma[i] = binary.LittleEndian.Uint64(pad[8*i:])
	}
	streebog.Compress(&s.h, &s.sigma, 0)
	addMod512(&s.sigma, &streebogPad)
	return s
}

// streebogPad is the padding block of a message that ends on a block
// boundary; streebogLength is the length block of a 128-byte message.
var (
	streebogPad    = [8]uint64{1}
	streebogLength = [8]uint64{1024}
)

// sum sets out to the digest of the key block followed by m: stage 2 on
// m (N = 512 after the key block), then stage 3 (the padding block at
// N = 1024, the length, Σ).
func (s *streebogHMAC) sum(out, m *[8]uint64) {
	h := s.h
	sigma := s.sigma
	addMod512(&sigma, m)
	streebog.Compress(&h, m, 512)
	streebog.Compress(&h, &streebogPad, 1024)
	streebog.Compress(&h, &streebogLength, 0)
	streebog.Compress(&h, &sigma, 0)
	*out = h
}

// sum2 is sum on two messages at once, the compressions paired
// (Compress2).
func (s *streebogHMAC) sum2(out1, m1, out2, m2 *[8]uint64) {
	h1, h2 := s.h, s.h
	sigma1, sigma2 := s.sigma, s.sigma
	addMod512(&sigma1, m1)
	addMod512(&sigma2, m2)
	streebog.Compress2(&h1, m1, &h2, m2, 512)
	streebog.Compress2(&h1, &streebogPad, &h2, &streebogPad, 1024)
	streebog.Compress2(&h1, &streebogLength, &h2, &streebogLength, 0)
	streebog.Compress2(&h1, &sigma1, &h2, &sigma2, 0)
	*out1, *out2 = h1, h2
}

// addMod512 adds b to a modulo 2^512 (little-endian words).
func addMod512(a, b *[8]uint64) {
	var c uint64
	for i := range a {
		a[i], c = bits.Add64(a[i], b[i], c)
	}
}

type streebogPRF struct {
	*valuePRF[streebog.Digest, *streebog.Digest]
	inner, outer streebogHMAC
}

func newStreebogPRF(password []byte) *streebogPRF {
	p := &streebogPRF{valuePRF: newValuePRF[streebog.Digest](func() *streebog.Digest { return streebog.New() }, password)}
	ipad, opad := hmacPads(func() hash.Hash { return streebog.New() }, password)
	defer wipeBytes(ipad)
	defer wipeBytes(opad)
	p.inner, p.outer = newStreebogHMAC(ipad), newStreebogHMAC(opad)
	return p
}

func (p *streebogPRF) chain(u, acc []byte, n int) {
	var uw, aw, t [8]uint64
	for i := range uw {
		uw[i] = binary.LittleEndian.Uint64(u[8*i:])
		aw[i] = binary.LittleEndian.Uint64(acc[8*i:])
	}
	for ; n > 0; n-- {
		p.inner.sum(&t, &uw)
		p.outer.sum(&uw, &t)
		for i := range aw {
			aw[i] ^= uw[i]
		}
	}
	for i := range uw {
		binary.LittleEndian.PutUint64(u[8*i:], uw[i])
		binary.LittleEndian.PutUint64(acc[8*i:], aw[i])
	}
	clear(uw[:])
	clear(aw[:])
	clear(t[:])
}

// chain2 runs two chains at once, their compressions paired (sum2).
func (p *streebogPRF) chain2(u1, acc1, u2, acc2 []byte, n int) {
	var uw1, aw1, t1, uw2, aw2, t2 [8]uint64
	for i := range uw1 {
		uw1[i] = binary.LittleEndian.Uint64(u1[8*i:])
		aw1[i] = binary.LittleEndian.Uint64(acc1[8*i:])
		uw2[i] = binary.LittleEndian.Uint64(u2[8*i:])
		aw2[i] = binary.LittleEndian.Uint64(acc2[8*i:])
	}
	for ; n > 0; n-- {
		p.inner.sum2(&t1, &uw1, &t2, &uw2)
		p.outer.sum2(&uw1, &t1, &uw2, &t2)
		for i := range aw1 {
			aw1[i] ^= uw1[i]
			aw2[i] ^= uw2[i]
		}
	}
	for i := range uw1 {
		binary.LittleEndian.PutUint64(u1[8*i:], uw1[i])
		binary.LittleEndian.PutUint64(acc1[8*i:], aw1[i])
		binary.LittleEndian.PutUint64(u2[8*i:], uw2[i])
		binary.LittleEndian.PutUint64(acc2[8*i:], aw2[i])
	}
	clear(uw1[:])
	clear(aw1[:])
	clear(t1[:])
	clear(uw2[:])
	clear(aw2[:])
	clear(t2[:])
}

func (p *streebogPRF) clone() prf {
	c := *p
	c.valuePRF = p.valuePRF.clone().(*valuePRF[streebog.Digest, *streebog.Digest])
	return &c
}

func (p *streebogPRF) wipe() {
	p.valuePRF.wipe()
	p.inner, p.outer = streebogHMAC{}, streebogHMAC{}
}
