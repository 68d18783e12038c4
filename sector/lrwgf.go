package sector

import "encoding/binary"

// LRW as the Linux kernel implements it (crypto/lrw.c, after the IEEE P1619
// LRW-AES drafts) works in GF(2^128) with the "bbe" convention of the
// kernel's gf128mul: a 16-byte block is a 128-bit big-endian integer whose
// bit k is the coefficient of x^k, reduced by x^128 = x^7+x^2+x+1. Values
// are held as (hi, lo) uint64 halves of that integer.

type gf128 struct{ hi, lo uint64 }

func loadBE128(b []byte) gf128 {
	return gf128{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:])}
}

func (a gf128) xor(b gf128) gf128 { return gf128{a.hi ^ b.hi, a.lo ^ b.lo} }

// mulX returns a·x.
func (a gf128) mulX() gf128 {
	carry := a.hi >> 63
	return gf128{a.hi<<1 | a.lo>>63, a.lo<<1 ^ (0x87 & -carry)}
}

// lrwKey holds the precomputed multiples of the tweak key K2.
//
// Multiplication by K2 is linear over GF(2), so the tweak of block index I
// splits along I's digits. Blocks of one sector share everything above the
// low byte of their index, except where the low byte wraps (at most once in
// a 4 KiB sector): T(I) = K2·(I with low byte cleared) ⊕ low[I & 0xff]. The
// per-block work is then one lookup, with no dependency between blocks.
type lrwKey struct {
	// nibble[n][v] = K2·(v·x^(4n)): the product of K2 and the 4-bit digit v
	// at position n, so a full product is 32 lookups (8 KiB).
	nibble [32][16]gf128
	// low[v] = K2·v for the low byte v of an index (4 KiB).
	low [256]gf128
}

func newLRWKey(k2 []byte) *lrwKey {
	k := new(lrwKey)
	var pow [128]gf128 // pow[i] = K2·x^i
	pow[0] = loadBE128(k2)
	for i := 1; i < 128; i++ {
		pow[i] = pow[i-1].mulX()
	}
	for n := 0; n < 32; n++ {
		for v := 1; v < 16; v++ {
			var t gf128
			for b := 0; b < 4; b++ {
				if v>>b&1 == 1 {
					t = t.xor(pow[4*n+b])
				}
			}
			k.nibble[n][v] = t
		}
	}
	for v := range k.low {
		k.low[v] = k.nibble[0][v&15].xor(k.nibble[1][v>>4])
	}
	return k
}

// mul returns I·K2.
func (k *lrwKey) mul(i gf128) gf128 {
	var t gf128
	for n := 0; n < 16; n++ {
		t = t.xor(k.nibble[n][i.lo>>(4*n)&15])
		t = t.xor(k.nibble[16+n][i.hi>>(4*n)&15])
	}
	return t
}
