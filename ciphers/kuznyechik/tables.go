package kuznyechik

import (
	"encoding/binary"
	"sync"
)

// block is a 128-bit value as two 64-bit words: lo holds bytes 0..7 and hi
// bytes 8..15, each read little-endian, so byte i of the block is bits
// 8*(i%8).. of lo (i < 8) or hi. Little-endian only fixes how the tables are
// laid out; loads, stores and tables all use it consistently. It is a struct,
// not an array, because Go passes small structs in registers but arrays of
// two words through memory.
type block struct{ lo, hi uint64 }

func loadBlock(b []byte) block {
	return block{binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[8:16])}
}

func storeBlock(b []byte, v block) {
	binary.LittleEndian.PutUint64(b[0:8], v.lo)
	binary.LittleEndian.PutUint64(b[8:16], v.hi)
}

func toBlock(b *[16]byte) block { return loadBlock(b[:]) }

// lsTable[i][x] = L(S(block with byte i = x, other bytes 0)). Because S acts
// bytewise and L is linear, L(S(a)) is the XOR of lsTable[i][a[i]] over the
// 16 byte positions: one encryption round is 16 lookups.
//
// ilsTable[i][x] = L^-1(block with byte i = pi^-1(x)): the decryption round
// S^-1 followed by L^-1, which is bytewise-separable in the same way when the
// rounds are regrouped (see decryptBlocks).
var lsTable, ilsTable [16][256]block

// initTables builds piInv, lsTable and ilsTable once, on first use, so that
// programs which link this package but never use Kuznyechik do not pay the
// few milliseconds it takes at start-up.
var initTables = sync.OnceFunc(buildTables)

func buildTables() {
	for i, v := range pi {
		piInv[v] = byte(i)
	}
	// L is linear over GF(2^8) (R multiplies bytes by constants and shifts),
	// so L(x at position i) is x times L(1 at position i), bytewise: only 16
	// full L evaluations are needed.
	for i := 0; i < 16; i++ {
		var col, colInv [16]byte
		col[i], colInv[i] = 1, 1
		transformL(&col)
		transformLInv(&colInv)
		for x := 0; x < 256; x++ {
			var v, w [16]byte
			for j := range v {
				v[j] = gfMul(pi[x], col[j])
				w[j] = gfMul(piInv[x], colInv[j])
			}
			lsTable[i][x] = toBlock(&v)
			ilsTable[i][x] = toBlock(&w)
		}
	}
}

// ls returns L(S(a)).
func ls(a block) block {
	t := &lsTable
	x, y := a.lo, a.hi
	r0 := t[0][byte(x)].lo ^ t[1][byte(x>>8)].lo ^ t[2][byte(x>>16)].lo ^ t[3][byte(x>>24)].lo ^
		t[4][byte(x>>32)].lo ^ t[5][byte(x>>40)].lo ^ t[6][byte(x>>48)].lo ^ t[7][byte(x>>56)].lo ^
		t[8][byte(y)].lo ^ t[9][byte(y>>8)].lo ^ t[10][byte(y>>16)].lo ^ t[11][byte(y>>24)].lo ^
		t[12][byte(y>>32)].lo ^ t[13][byte(y>>40)].lo ^ t[14][byte(y>>48)].lo ^ t[15][byte(y>>56)].lo
	r1 := t[0][byte(x)].hi ^ t[1][byte(x>>8)].hi ^ t[2][byte(x>>16)].hi ^ t[3][byte(x>>24)].hi ^
		t[4][byte(x>>32)].hi ^ t[5][byte(x>>40)].hi ^ t[6][byte(x>>48)].hi ^ t[7][byte(x>>56)].hi ^
		t[8][byte(y)].hi ^ t[9][byte(y>>8)].hi ^ t[10][byte(y>>16)].hi ^ t[11][byte(y>>24)].hi ^
		t[12][byte(y>>32)].hi ^ t[13][byte(y>>40)].hi ^ t[14][byte(y>>48)].hi ^ t[15][byte(y>>56)].hi
	return block{r0, r1}
}

// ils returns L^-1(S^-1(a)).
func ils(a block) block {
	t := &ilsTable
	x, y := a.lo, a.hi
	r0 := t[0][byte(x)].lo ^ t[1][byte(x>>8)].lo ^ t[2][byte(x>>16)].lo ^ t[3][byte(x>>24)].lo ^
		t[4][byte(x>>32)].lo ^ t[5][byte(x>>40)].lo ^ t[6][byte(x>>48)].lo ^ t[7][byte(x>>56)].lo ^
		t[8][byte(y)].lo ^ t[9][byte(y>>8)].lo ^ t[10][byte(y>>16)].lo ^ t[11][byte(y>>24)].lo ^
		t[12][byte(y>>32)].lo ^ t[13][byte(y>>40)].lo ^ t[14][byte(y>>48)].lo ^ t[15][byte(y>>56)].lo
	r1 := t[0][byte(x)].hi ^ t[1][byte(x>>8)].hi ^ t[2][byte(x>>16)].hi ^ t[3][byte(x>>24)].hi ^
		t[4][byte(x>>32)].hi ^ t[5][byte(x>>40)].hi ^ t[6][byte(x>>48)].hi ^ t[7][byte(x>>56)].hi ^
		t[8][byte(y)].hi ^ t[9][byte(y>>8)].hi ^ t[10][byte(y>>16)].hi ^ t[11][byte(y>>24)].hi ^
		t[12][byte(y>>32)].hi ^ t[13][byte(y>>40)].hi ^ t[14][byte(y>>48)].hi ^ t[15][byte(y>>56)].hi
	return block{r0, r1}
}

// lInv returns L^-1(a): ilsTable applied to pi of each byte, so that the
// table's built-in S^-1 cancels.
func lInv(a block) block { return ils(mapBytes(a, &pi)) }

// mapBytes replaces every byte x of a by t[x].
func mapBytes(a block, t *[256]byte) block {
	var r block
	for i := 0; i < 64; i += 8 {
		r.lo |= uint64(t[byte(a.lo>>i)]) << i
		r.hi |= uint64(t[byte(a.hi>>i)]) << i
	}
	return r
}
