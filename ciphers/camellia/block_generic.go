package camellia

import (
	"encoding/binary"
	"math/bits"
)

// cryptBlocksGeneric runs the data randomizing part (RFC 3713 2.3.2) over every
// 16-byte block of src with schedule s: encryption or decryption depending
// on which schedule is passed.
//
// Each block alone is one long chain of dependent table lookups, so several
// blocks go through the rounds side by side and the CPU overlaps their
// loads: four at a time where 64-bit registers are plentiful, two on 32-bit
// targets where four blocks' state would not fit in registers.
func cryptBlocksGeneric(s *schedule, dst, src []byte) {
	if bits.UintSize == 64 {
		for len(src) >= 4*BlockSize {
			cryptBlock4(s, dst[:4*BlockSize], src[:4*BlockSize])
			src, dst = src[4*BlockSize:], dst[4*BlockSize:]
		}
	}
	for len(src) >= 2*BlockSize {
		cryptBlock2(s, dst[:2*BlockSize], src[:2*BlockSize])
		src, dst = src[2*BlockSize:], dst[2*BlockSize:]
	}
	if len(src) >= BlockSize {
		cryptBlock(s, dst[:BlockSize], src[:BlockSize])
	}
}

// cryptBlock2 is cryptBlock for two blocks at once.
func cryptBlock2(s *schedule, dst, src []byte) {
	a1 := binary.BigEndian.Uint64(src[0:8]) ^ s.kw[0]
	a2 := binary.BigEndian.Uint64(src[8:16]) ^ s.kw[1]
	b1 := binary.BigEndian.Uint64(src[16:24]) ^ s.kw[0]
	b2 := binary.BigEndian.Uint64(src[24:32]) ^ s.kw[1]
	k := s.k[:s.rounds]
	ke := s.ke[:]
	for {
		a2 ^= f(a1 ^ k[0])
		b2 ^= f(b1 ^ k[0])
		a1 ^= f(a2 ^ k[1])
		b1 ^= f(b2 ^ k[1])
		a2 ^= f(a1 ^ k[2])
		b2 ^= f(b1 ^ k[2])
		a1 ^= f(a2 ^ k[3])
		b1 ^= f(b2 ^ k[3])
		a2 ^= f(a1 ^ k[4])
		b2 ^= f(b1 ^ k[4])
		a1 ^= f(a2 ^ k[5])
		b1 ^= f(b2 ^ k[5])
		k = k[6:]
		if len(k) == 0 {
			break
		}
		a1 = fl(a1, ke[0])
		b1 = fl(b1, ke[0])
		a2 = flInv(a2, ke[1])
		b2 = flInv(b2, ke[1])
		ke = ke[2:]
	}
	a2 ^= s.kw[2]
	a1 ^= s.kw[3]
	b2 ^= s.kw[2]
	b1 ^= s.kw[3]
	binary.BigEndian.PutUint64(dst[0:8], a2)
	binary.BigEndian.PutUint64(dst[8:16], a1)
	binary.BigEndian.PutUint64(dst[16:24], b2)
	binary.BigEndian.PutUint64(dst[24:32], b1)
}

// cryptBlock encrypts or decrypts one block.
func cryptBlock(s *schedule, dst, src []byte) {
	d1 := binary.BigEndian.Uint64(src[0:8]) ^ s.kw[0]
	d2 := binary.BigEndian.Uint64(src[8:16]) ^ s.kw[1]
	k := s.k[:s.rounds]
	ke := s.ke[:]
	for {
		d2 ^= f(d1 ^ k[0])
		d1 ^= f(d2 ^ k[1])
		d2 ^= f(d1 ^ k[2])
		d1 ^= f(d2 ^ k[3])
		d2 ^= f(d1 ^ k[4])
		d1 ^= f(d2 ^ k[5])
		k = k[6:]
		if len(k) == 0 {
			break
		}
		d1 = fl(d1, ke[0])
		d2 = flInv(d2, ke[1])
		ke = ke[2:]
	}
	d2 ^= s.kw[2]
	d1 ^= s.kw[3]
	binary.BigEndian.PutUint64(dst[0:8], d2)
	binary.BigEndian.PutUint64(dst[8:16], d1)
}

// cryptBlock4 is cryptBlock for four blocks at once.
func cryptBlock4(s *schedule, dst, src []byte) {
	a1 := binary.BigEndian.Uint64(src[0:8]) ^ s.kw[0]
	a2 := binary.BigEndian.Uint64(src[8:16]) ^ s.kw[1]
	b1 := binary.BigEndian.Uint64(src[16:24]) ^ s.kw[0]
	b2 := binary.BigEndian.Uint64(src[24:32]) ^ s.kw[1]
	c1 := binary.BigEndian.Uint64(src[32:40]) ^ s.kw[0]
	c2 := binary.BigEndian.Uint64(src[40:48]) ^ s.kw[1]
	d1 := binary.BigEndian.Uint64(src[48:56]) ^ s.kw[0]
	d2 := binary.BigEndian.Uint64(src[56:64]) ^ s.kw[1]
	k := s.k[:s.rounds]
	ke := s.ke[:]
	for {
		for r := 0; r < 6; r += 2 {
			a2 ^= f(a1 ^ k[r])
			b2 ^= f(b1 ^ k[r])
			c2 ^= f(c1 ^ k[r])
			d2 ^= f(d1 ^ k[r])
			a1 ^= f(a2 ^ k[r+1])
			b1 ^= f(b2 ^ k[r+1])
			c1 ^= f(c2 ^ k[r+1])
			d1 ^= f(d2 ^ k[r+1])
		}
		k = k[6:]
		if len(k) == 0 {
			break
		}
		a1, b1, c1, d1 = fl(a1, ke[0]), fl(b1, ke[0]), fl(c1, ke[0]), fl(d1, ke[0])
		a2, b2, c2, d2 = flInv(a2, ke[1]), flInv(b2, ke[1]), flInv(c2, ke[1]), flInv(d2, ke[1])
		ke = ke[2:]
	}
	binary.BigEndian.PutUint64(dst[0:8], a2^s.kw[2])
	binary.BigEndian.PutUint64(dst[8:16], a1^s.kw[3])
	binary.BigEndian.PutUint64(dst[16:24], b2^s.kw[2])
	binary.BigEndian.PutUint64(dst[24:32], b1^s.kw[3])
	binary.BigEndian.PutUint64(dst[32:40], c2^s.kw[2])
	binary.BigEndian.PutUint64(dst[40:48], c1^s.kw[3])
	binary.BigEndian.PutUint64(dst[48:56], d2^s.kw[2])
	binary.BigEndian.PutUint64(dst[56:64], d1^s.kw[3])
}
