package aes

import "math/bits"

// shiftRows rotates row r of every block left by r columns: in the layout of
// bitslice_layout.go row r is the 16-bit field at bit 16r holding four 4-bit
// column groups, so row r is rotated right by 4r bits inside its field.
func shiftRows(q *state) {
	for i, x := range q {
		q[i] = x&0x000000000000ffff |
			(x>>4)&0x000000000fff0000 | (x<<12)&0x00000000f0000000 |
			(x>>8)&0x000000ff00000000 | (x<<8)&0x0000ff0000000000 |
			(x<<4)&0xfff0000000000000 | (x>>12)&0x000f000000000000
	}
}

// invShiftRows rotates row r right by r columns.
func invShiftRows(q *state) {
	for i, x := range q {
		q[i] = x&0x000000000000ffff |
			(x<<4)&0x00000000fff00000 | (x>>12)&0x00000000000f0000 |
			(x>>8)&0x000000ff00000000 | (x<<8)&0x0000ff0000000000 |
			(x>>4)&0x0fff000000000000 | (x<<12)&0xf000000000000000
	}
}

// rotRow moves row r+1 (mod 4) of every column into row r.
func rotRow(x uint64) uint64 { return bits.RotateLeft64(x, -16) }

// rotRow2 moves row r+2 into row r.
func rotRow2(x uint64) uint64 { return bits.RotateLeft64(x, 32) }

// colRot1, colRot2 and colRot3 move column j+m (mod 4) of every row into
// column j, m = 1, 2, 3: a rotation of the 4-bit groups inside each 16-bit
// row field.
func colRot1(x uint64) uint64 { return (x>>4)&0x0fff0fff0fff0fff | (x<<12)&0xf000f000f000f000 }
func colRot2(x uint64) uint64 { return (x>>8)&0x00ff00ff00ff00ff | (x<<8)&0xff00ff00ff00ff00 }
func colRot3(x uint64) uint64 { return (x>>12)&0x000f000f000f000f | (x<<4)&0xfff0fff0fff0fff0 }

// Fixslicing (Adomnicai and Peyrin, "Fixslicing AES-like ciphers", TCHES
// 2021/1): ShiftRows only moves bytes and commutes with SubBytes, so the
// rounds skip it and let the stored state drift. After k skipped ShiftRows
// (mod 4) the state byte at row r, column c is stored at column c+k*r. Only
// MixColumns and AddRoundKey care: MixColumns finds row r+1 of a column at
// column j+k of the next row and row r+2 at column j+2k, which costs a
// group rotation on top of the row rotation it needs anyway, and the round
// keys are stored pre-shifted by the offset of their round. One real
// ShiftRows^k at the end restores the layout. That removes most of the
// cost of ShiftRows, the most expensive linear step in this layout.

// mixColumnsAt is MixColumns followed by AddRoundKey(rk) for a state stored
// with column offset k:
// b_r = 2a_r ^ 3a_(r+1) ^ a_(r+2) ^ a_(r+3), written as
// b = 2t ^ a_(r+1) ^ t_(r+2) with t_r = a_r ^ a_(r+1). Multiplying a plane
// vector by 2 shifts the planes up and folds plane 7 into planes 0, 1, 3
// and 4 (the polynomial 0x11b).
func mixColumnsAt(q *state, k int, rk *state) {
	var r, t state
	switch k {
	case 0:
		for i, x := range q {
			r[i] = rotRow(x)
		}
	case 1:
		for i, x := range q {
			r[i] = colRot1(rotRow(x))
		}
	case 2:
		for i, x := range q {
			r[i] = colRot2(rotRow(x))
		}
	default:
		for i, x := range q {
			r[i] = colRot3(rotRow(x))
		}
	}
	for i, x := range q {
		t[i] = x ^ r[i]
	}
	var u state // t_(r+2): row r+2 sits at column j+2k
	if k&1 == 0 {
		for i, x := range t {
			u[i] = rotRow2(x)
		}
	} else {
		for i, x := range t {
			u[i] = colRot2(rotRow2(x))
		}
	}
	q[0] = t[7] ^ r[0] ^ u[0] ^ rk[0]
	q[1] = t[0] ^ t[7] ^ r[1] ^ u[1] ^ rk[1]
	q[2] = t[1] ^ r[2] ^ u[2] ^ rk[2]
	q[3] = t[2] ^ t[7] ^ r[3] ^ u[3] ^ rk[3]
	q[4] = t[3] ^ t[7] ^ r[4] ^ u[4] ^ rk[4]
	q[5] = t[4] ^ r[5] ^ u[5] ^ rk[5]
	q[6] = t[5] ^ r[6] ^ u[6] ^ rk[6]
	q[7] = t[6] ^ r[7] ^ u[7] ^ rk[7]
}

// invMixColumnsAt uses the factorisation of the InvMixColumns polynomial
// {0b}x^3+{0d}x^2+{09}x+{0e} = ({03}x^3+x^2+x+{02}) * ({04}x^2+{05})
// mod x^4+1: first u_r = a_r ^ 4(a_r ^ a_(r+2)), then MixColumns, both at
// column offset k. AddRoundKey(rk) comes first, folded into the first pass.
func invMixColumnsAt(q *state, k int, rk *state) {
	var v state
	for i := range q {
		q[i] ^= rk[i]
	}
	if k&1 == 0 {
		for i, x := range q {
			v[i] = x ^ rotRow2(x)
		}
	} else {
		for i, x := range q {
			v[i] = x ^ colRot2(rotRow2(x))
		}
	}
	// 4v, plane by plane (two applications of the doubling above).
	q[0] ^= v[6]
	q[1] ^= v[6] ^ v[7]
	q[2] ^= v[0] ^ v[7]
	q[3] ^= v[1] ^ v[6]
	q[4] ^= v[2] ^ v[6] ^ v[7]
	q[5] ^= v[3] ^ v[7]
	q[6] ^= v[4]
	q[7] ^= v[5]
	mixColumnsAt(q, k, &zeroState)
}

var zeroState state

func addRoundKey(q *state, k *state) {
	for i := range q {
		q[i] ^= k[i]
	}
}

// encrypt4 encrypts the four blocks in q. rk[r] is round key r stored at
// column offset r mod 4 (see bitsliceKeys).
func encrypt4(q *state, rk *[maxRounds + 1]state, nr int) {
	addRoundKey(q, &rk[0])
	for r := 1; r < nr; r++ {
		subBytes(q)
		mixColumnsAt(q, r&3, &rk[r])
	}
	subBytes(q)
	addRoundKey(q, &rk[nr])
	for k := 0; k < nr&3; k++ {
		shiftRows(q)
	}
}

// decrypt4 runs the straightforward inverse cipher (FIPS-197 5.3) on q,
// skipping InvShiftRows the same way: the offset falls by one per round.
// rk[r] is round key r stored at offset (r-nr) mod 4.
func decrypt4(q *state, rk *[maxRounds + 1]state, nr int) {
	addRoundKey(q, &rk[nr])
	for r := nr - 1; r > 0; r-- {
		invSubBytes(q)
		invMixColumnsAt(q, (r-nr)&3, &rk[r])
	}
	invSubBytes(q)
	addRoundKey(q, &rk[0])
	for k := 0; k < (-nr)&3; k++ {
		shiftRows(q)
	}
}

// bitsliceKeys converts the byte round keys into bitsliced form, each key
// repeated for the four block slots and stored at the column offset its
// round sees: r mod 4 for encryption, (r-nr) mod 4 for decryption. A key
// byte for row r, column c belongs at column c+k*r, which is InvShiftRows
// applied k times.
func bitsliceKeys(enc *roundKeys, nr int, encOut, decOut *[maxRounds + 1]state) {
	var four [64]byte
	for r := 0; r <= nr; r++ {
		for b := 0; b < 4; b++ {
			copy(four[16*b:], enc[16*r:16*r+16])
		}
		var k state
		k.load(four[:], nil)
		encOut[r], decOut[r] = k, k
		for i := 0; i < r&3; i++ {
			invShiftRows(&encOut[r])
		}
		for i := 0; i < (r-nr)&3; i++ {
			invShiftRows(&decOut[r])
		}
	}
	for i := range four {
		four[i] = 0
	}
}
