package aes

import "encoding/binary"

// Bitsliced layout (the generic path).
//
// Four blocks (64 bytes) are held in eight uint64 "planes": plane i holds bit
// i of every byte. Within a plane, the byte at row r, column c of block b
// (FIPS-197 state s[r,c], input byte 4c+r) sits at bit 16r + 4c + b. Rows are
// 16-bit fields, so MixColumns reaches the next row with a 64-bit rotation by
// 16, and ShiftRows is a rotation of 4-bit column groups inside each row.
//
// pack gets there from the natural little-endian loads (word 2b+h = bytes
// 8h..8h+7 of block b) by six "exchanges": a swap-move between word pairs that
// trades one bit of the word index for one bit of the position inside the
// word. Writing the word index as (a2 a1 a0) and the position as (p5..p0),
// the loads start as a = (b1 b0 c1), p = (c0 r1 r0 i2 i1 i0) with i the bit
// number; the exchanges a0<->p3, a0<->p4, a0<->p5, a0<->p2, a2<->p1, a1<->p0
// end at a = (i1 i0 i2), p = (r1 r0 c1 c0 b1 b0). Each exchange is its own
// inverse, so unpack runs them backwards.

// exchange swaps the bits at positions with bit s set in lo with those at
// positions with bit s clear in hi (mask m selects the latter).
func exchange(lo, hi *uint64, s uint, m uint64) {
	t := (*lo>>s ^ *hi) & m
	*hi ^= t
	*lo ^= t << s
}

const (
	mask1  = 0x5555555555555555
	mask2  = 0x3333333333333333
	mask4  = 0x0f0f0f0f0f0f0f0f
	mask8  = 0x00ff00ff00ff00ff
	mask16 = 0x0000ffff0000ffff
	mask32 = 0x00000000ffffffff
)

// bitsliceWords converts eight natural words into planes in place.
func bitsliceWords(w *[8]uint64) {
	for j := 0; j < 8; j += 2 { // a0 <-> p3, p4, p5, p2
		exchange(&w[j], &w[j+1], 8, mask8)
		exchange(&w[j], &w[j+1], 16, mask16)
		exchange(&w[j], &w[j+1], 32, mask32)
		exchange(&w[j], &w[j+1], 4, mask4)
	}
	for j := 0; j < 4; j++ { // a2 <-> p1
		exchange(&w[j], &w[j+4], 2, mask2)
	}
	for _, j := range [4]int{0, 1, 4, 5} { // a1 <-> p0
		exchange(&w[j], &w[j+2], 1, mask1)
	}
}

// unbitsliceWords is the inverse of bitsliceWords.
func unbitsliceWords(w *[8]uint64) {
	for _, j := range [4]int{0, 1, 4, 5} {
		exchange(&w[j], &w[j+2], 1, mask1)
	}
	for j := 0; j < 4; j++ {
		exchange(&w[j], &w[j+4], 2, mask2)
	}
	for j := 0; j < 8; j += 2 {
		exchange(&w[j], &w[j+1], 4, mask4)
		exchange(&w[j], &w[j+1], 32, mask32)
		exchange(&w[j], &w[j+1], 16, mask16)
		exchange(&w[j], &w[j+1], 8, mask8)
	}
}

// planeWord[i] is the index of the word that holds plane i after
// bitsliceWords: word index bits (a2 a1 a0) = (i1 i0 i2).
var planeWord = [8]int{0, 2, 4, 6, 1, 3, 5, 7}

// state is four blocks in bitsliced form: state[i] is plane i.
type state [8]uint64

// load packs up to four blocks from src (len 16..64, whole blocks) into q,
// XORing each block with the matching 16 bytes of x when x is not nil
// (the XTS tweaks). Missing blocks are zero.
func (q *state) load(src []byte, x *[8]uint64) {
	var w [8]uint64
	for j := 0; j < len(src)/8; j++ {
		w[j] = binary.LittleEndian.Uint64(src[8*j:])
	}
	if x != nil {
		for j := range w {
			w[j] ^= x[j]
		}
	}
	bitsliceWords(&w)
	for i := range q {
		q[i] = w[planeWord[i]]
	}
}

// store unpacks q and writes len(dst)/16 blocks (at most four), XORed with x
// when x is not nil.
func (q *state) store(dst []byte, x *[8]uint64) {
	var w [8]uint64
	for i := range q {
		w[planeWord[i]] = q[i]
	}
	unbitsliceWords(&w)
	if x != nil {
		for j := range w {
			w[j] ^= x[j]
		}
	}
	for j := 0; j < len(dst)/8; j++ {
		binary.LittleEndian.PutUint64(dst[8*j:], w[j])
	}
}
