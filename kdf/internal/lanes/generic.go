package lanes

import (
	"encoding/binary"
	"math/bits"

	"github.com/cryptvol/cryptvol/hashes/ripemd160"
)

// The generic kernels: one chain at a time in plain Go, on the same State
// and with the same fixed padding as the assembly ones.

// compress512 is the SHA-512 compression function (FIPS 180-4 6.4.2) of
// the block w[0..15] into h; it overwrites w[16..79] with the schedule.
func compress512(h *[8]uint64, w *[80]uint64) {
	for t := 16; t < 80; t++ {
		x, y := w[t-2], w[t-15]
		s1 := bits.RotateLeft64(x, -19) ^ bits.RotateLeft64(x, -61) ^ x>>6
		s0 := bits.RotateLeft64(y, -1) ^ bits.RotateLeft64(y, -8) ^ y>>7
		w[t] = s1 + w[t-7] + s0 + w[t-16]
	}
	a, b, c, d, e, f, g, hh := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	for t := 0; t < 80; t++ {
		t1 := hh + (bits.RotateLeft64(e, -14) ^ bits.RotateLeft64(e, -18) ^ bits.RotateLeft64(e, -41)) +
			((e & f) ^ (^e & g)) + k512[t] + w[t]
		t2 := (bits.RotateLeft64(a, -28) ^ bits.RotateLeft64(a, -34) ^ bits.RotateLeft64(a, -39)) +
			((a & b) ^ (a & c) ^ (b & c))
		hh, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
	}
	h[0] += a
	h[1] += b
	h[2] += c
	h[3] += d
	h[4] += e
	h[5] += f
	h[6] += g
	h[7] += hh
}

// compress256 is SHA-256's (6.2.2).
func compress256(h *[8]uint32, w *[64]uint32) {
	for t := 16; t < 64; t++ {
		x, y := w[t-2], w[t-15]
		s1 := bits.RotateLeft32(x, -17) ^ bits.RotateLeft32(x, -19) ^ x>>10
		s0 := bits.RotateLeft32(y, -7) ^ bits.RotateLeft32(y, -18) ^ y>>3
		w[t] = s1 + w[t-7] + s0 + w[t-16]
	}
	a, b, c, d, e, f, g, hh := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	for t := 0; t < 64; t++ {
		t1 := hh + (bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)) +
			((e & f) ^ (^e & g)) + k256[t] + w[t]
		t2 := (bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)) +
			((a & b) ^ (a & c) ^ (b & c))
		hh, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
	}
	h[0] += a
	h[1] += b
	h[2] += c
	h[3] += d
	h[4] += e
	h[5] += f
	h[6] += g
	h[7] += hh
}

// chains512Generic runs n iterations of lanes [lo, hi) one after another.
func chains512Generic(s *State, lo, hi, n int) {
	var w [80]uint64
	for lane := lo; lane < hi; lane++ {
		var inner, outer, u, acc [8]uint64
		for j := range 8 {
			inner[j], outer[j] = s.w[secInner][j][lane], s.w[secOuter][j][lane]
			u[j], acc[j] = s.w[secU][j][lane], s.w[secAcc][j][lane]
		}
		for range n {
			for _, key := range [2]*[8]uint64{&inner, &outer} {
				copy(w[:8], u[:])
				w[8], w[15] = 1<<63, (128+64)*8
				clear(w[9:15])
				u = *key
				compress512(&u, &w)
			}
			for j := range acc {
				acc[j] ^= u[j]
			}
		}
		for j := range 8 {
			s.w[secU][j][lane], s.w[secAcc][j][lane] = u[j], acc[j]
		}
		clear(inner[:])
		clear(outer[:])
		clear(u[:])
		clear(acc[:])
	}
	clear(w[:])
}

// chains256Generic is chains512Generic for SHA-256.
func chains256Generic(s *State, lo, hi, n int) {
	v := s.w32()
	var w [64]uint32
	for lane := lo; lane < hi; lane++ {
		var inner, outer, u, acc [8]uint32
		for j := range 8 {
			inner[j], outer[j] = v[secInner][j][lane], v[secOuter][j][lane]
			u[j], acc[j] = v[secU][j][lane], v[secAcc][j][lane]
		}
		for range n {
			for _, key := range [2]*[8]uint32{&inner, &outer} {
				copy(w[:8], u[:])
				w[8], w[15] = 1<<31, (64+32)*8
				clear(w[9:15])
				u = *key
				compress256(&u, &w)
			}
			for j := range acc {
				acc[j] ^= u[j]
			}
		}
		for j := range 8 {
			v[secU][j][lane], v[secAcc][j][lane] = u[j], acc[j]
		}
		clear(inner[:])
		clear(outer[:])
		clear(u[:])
		clear(acc[:])
	}
	clear(w[:])
}

// chainsRIPEMD160Generic runs n iterations of lanes [lo, hi) one after
// another through hashes/ripemd160's compression function. Each block is
// the 20-byte digest, 0x80, zeros and the bit length of key block plus
// digest, (64+20)*8, little-endian.
func chainsRIPEMD160Generic(s *State, lo, hi, n int) {
	v := s.w32()
	var blk [64]byte
	blk[20] = 0x80
	binary.LittleEndian.PutUint64(blk[56:], (64+20)*8)
	for lane := lo; lane < hi; lane++ {
		var inner, outer, u, acc [5]uint32
		for j := range 5 {
			inner[j], outer[j] = v[secInner][j][lane], v[secOuter][j][lane]
			u[j], acc[j] = v[secU][j][lane], v[secAcc][j][lane]
		}
		for range n {
			for _, key := range [2]*[5]uint32{&inner, &outer} {
				for j, w := range u {
					binary.LittleEndian.PutUint32(blk[4*j:], w)
				}
				u = *key
				ripemd160.Block(&u, blk[:])
			}
			for j := range acc {
				acc[j] ^= u[j]
			}
		}
		for j := range 5 {
			v[secU][j][lane], v[secAcc][j][lane] = u[j], acc[j]
		}
		clear(inner[:])
		clear(outer[:])
		clear(u[:])
		clear(acc[:])
	}
	clear(blk[:20])
}
