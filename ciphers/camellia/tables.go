package camellia

import "math/bits"

// sbox1 is SBOX1 of RFC 3713 section 2.4.4; SBOX2..4 are rotations of it.
var sbox1 = [256]byte{
	112, 130, 44, 236, 179, 39, 192, 229, 228, 133, 87, 53, 234, 12, 174, 65,
	35, 239, 107, 147, 69, 25, 165, 33, 237, 14, 79, 78, 29, 101, 146, 189,
	134, 184, 175, 143, 124, 235, 31, 206, 62, 48, 220, 95, 94, 197, 11, 26,
	166, 225, 57, 202, 213, 71, 93, 61, 217, 1, 90, 214, 81, 86, 108, 77,
	139, 13, 154, 102, 251, 204, 176, 45, 116, 18, 43, 32, 240, 177, 132, 153,
	223, 76, 203, 194, 52, 126, 118, 5, 109, 183, 169, 49, 209, 23, 4, 215,
	20, 88, 58, 97, 222, 27, 17, 28, 50, 15, 156, 22, 83, 24, 242, 34,
	254, 68, 207, 178, 195, 181, 122, 145, 36, 8, 232, 168, 96, 252, 105, 80,
	170, 208, 160, 125, 161, 137, 98, 151, 84, 91, 30, 149, 224, 255, 100, 210,
	16, 196, 0, 72, 163, 247, 117, 219, 138, 3, 230, 218, 9, 63, 221, 148,
	135, 92, 131, 2, 205, 74, 144, 51, 115, 103, 246, 243, 157, 127, 191, 226,
	82, 155, 216, 38, 200, 55, 198, 59, 129, 150, 111, 75, 19, 190, 99, 46,
	233, 121, 167, 140, 159, 110, 188, 142, 41, 245, 249, 182, 47, 253, 180, 89,
	120, 152, 6, 106, 231, 70, 113, 186, 212, 37, 171, 66, 136, 162, 141, 250,
	114, 7, 185, 85, 248, 238, 172, 10, 54, 73, 42, 104, 60, 56, 241, 164,
	64, 40, 211, 123, 187, 201, 67, 193, 21, 227, 173, 244, 119, 199, 128, 158,
}

// sp[i][x] is the contribution of input byte i (0 = most significant) of the
// F-function to its 64-bit output: the S-box of that position applied to x,
// then spread by the P-function to every output byte that uses it. F is then
// eight table lookups XORed together, the usual fast software form of
// Camellia (the SP1110/SP0222/... tables of 32-bit code, widened to 64 bits).
var sp [8][256]uint64

// pUses[j] lists, for output byte j of the P-function (RFC 3713 2.4.3,
// y1..y8), which S-box outputs z1..z8 it XORs together (0-based).
var pUses = [8][]int{
	{0, 2, 3, 5, 6, 7},
	{0, 1, 3, 4, 6, 7},
	{0, 1, 2, 4, 5, 7},
	{1, 2, 3, 4, 5, 6},
	{0, 1, 5, 6, 7},
	{1, 2, 4, 6, 7},
	{2, 3, 4, 5, 7},
	{0, 3, 4, 5, 6},
}

func sboxAt(pos int, x byte) byte {
	switch pos {
	case 0, 7: // SBOX1
		return sbox1[x]
	case 1, 4: // SBOX2: SBOX1 rotated left by one bit
		return bits.RotateLeft8(sbox1[x], 1)
	case 2, 5: // SBOX3: SBOX1 rotated right by one bit
		return bits.RotateLeft8(sbox1[x], -1)
	default: // 3, 6: SBOX4: SBOX1 of the input rotated left by one bit
		return sbox1[bits.RotateLeft8(x, 1)]
	}
}

func init() {
	for out, uses := range pUses {
		shift := uint(56 - 8*out)
		for _, in := range uses {
			for x := 0; x < 256; x++ {
				sp[in][x] |= uint64(sboxAt(in, byte(x))) << shift
			}
		}
	}
}

// f is the Camellia F-function applied to x, which is already XORed with the
// round key.
func f(x uint64) uint64 {
	return sp[0][x>>56] ^ sp[1][byte(x>>48)] ^ sp[2][byte(x>>40)] ^ sp[3][byte(x>>32)] ^
		sp[4][byte(x>>24)] ^ sp[5][byte(x>>16)] ^ sp[6][byte(x>>8)] ^ sp[7][byte(x)]
}

// fl is the FL-function of RFC 3713 2.4.2.
func fl(x, ke uint64) uint64 {
	x1, x2 := uint32(x>>32), uint32(x)
	k1, k2 := uint32(ke>>32), uint32(ke)
	x2 ^= bits.RotateLeft32(x1&k1, 1)
	x1 ^= x2 | k2
	return uint64(x1)<<32 | uint64(x2)
}

// flInv is the FLINV-function of RFC 3713 2.4.2.
func flInv(y, ke uint64) uint64 {
	y1, y2 := uint32(y>>32), uint32(y)
	k1, k2 := uint32(ke>>32), uint32(ke)
	y1 ^= y2 | k2
	y2 ^= bits.RotateLeft32(y1&k1, 1)
	return uint64(y1)<<32 | uint64(y2)
}
