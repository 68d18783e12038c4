package lanes

import "math/bits"

// BLAKE2s (RFC 7693) as VeraCrypt's HMAC uses it: unkeyed, 32-byte
// digest, 64-byte blocks. HMAC absorbs the key block as a non-final block
// (counter 64), and the 32-byte message of each PBKDF2 compression,
// zero-padded, as the final one (counter 96, final flag set).

// blake2sSigma is the message schedule of the ten rounds (RFC 7693 2.7).
var blake2sSigma = [10][16]uint8{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	{14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
	{11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
	{7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
	{9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
	{2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
	{12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
	{13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
	{6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
	{10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
}

// blake2sIV is BLAKE2s's IV (SHA-256's initial hash value), and
// blake2sParam the parameter block's first word for an unkeyed 32-byte
// digest (digest length 32, fanout 1, depth 1), xored into h[0].
var blake2sIV = iv256

const blake2sParam = 0x01010020

// compressBLAKE2s is the compression function F (RFC 7693 3.2) with a
// 32-bit counter t (PBKDF2 never reaches 2^32 bytes).
func compressBLAKE2s(h *[8]uint32, m *[16]uint32, t uint32, final bool) {
	var v [16]uint32
	copy(v[:8], h[:])
	copy(v[8:], blake2sIV[:])
	v[12] ^= t
	if final {
		v[14] = ^v[14]
	}
	g := func(a, b, c, d int, x, y uint32) {
		v[a] += v[b] + x
		v[d] = bits.RotateLeft32(v[d]^v[a], -16)
		v[c] += v[d]
		v[b] = bits.RotateLeft32(v[b]^v[c], -12)
		v[a] += v[b] + y
		v[d] = bits.RotateLeft32(v[d]^v[a], -8)
		v[c] += v[d]
		v[b] = bits.RotateLeft32(v[b]^v[c], -7)
	}
	for _, s := range blake2sSigma {
		g(0, 4, 8, 12, m[s[0]], m[s[1]])
		g(1, 5, 9, 13, m[s[2]], m[s[3]])
		g(2, 6, 10, 14, m[s[4]], m[s[5]])
		g(3, 7, 11, 15, m[s[6]], m[s[7]])
		g(0, 5, 10, 15, m[s[8]], m[s[9]])
		g(1, 6, 11, 12, m[s[10]], m[s[11]])
		g(2, 7, 8, 13, m[s[12]], m[s[13]])
		g(3, 4, 9, 14, m[s[14]], m[s[15]])
	}
	for i := range h {
		h[i] ^= v[i] ^ v[i+8]
	}
	clear(v[:])
}

// chainsBLAKE2sGeneric runs n iterations of lanes [lo, hi) one after
// another.
func chainsBLAKE2sGeneric(s *State, lo, hi, n int) {
	v := s.w32()
	var m [16]uint32
	for lane := lo; lane < hi; lane++ {
		var inner, outer, u, acc [8]uint32
		for j := range 8 {
			inner[j], outer[j] = v[secInner][j][lane], v[secOuter][j][lane]
			u[j], acc[j] = v[secU][j][lane], v[secAcc][j][lane]
		}
		for range n {
			for _, key := range [2]*[8]uint32{&inner, &outer} {
				copy(m[:8], u[:])
				u = *key
				compressBLAKE2s(&u, &m, 64+32, true)
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
	clear(m[:])
}
