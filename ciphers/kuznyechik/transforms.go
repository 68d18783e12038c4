package kuznyechik

// This file holds the byte-level definitions of RFC 7801 section 2, used to
// build the lookup tables and as the reference the tests check them against.
// A block is 16 bytes, b[0] = a15 (the most significant byte) .. b[15] = a0.

// pi is the nonlinear bijection of RFC 7801 section 2.2.1.
var pi = [256]byte{
	252, 238, 221, 17, 207, 110, 49, 22, 251, 196, 250, 218, 35, 197, 4, 77,
	233, 119, 240, 219, 147, 46, 153, 186, 23, 54, 241, 187, 20, 205, 95, 193,
	249, 24, 101, 90, 226, 92, 239, 33, 129, 28, 60, 66, 139, 1, 142, 79,
	5, 132, 2, 174, 227, 106, 143, 160, 6, 11, 237, 152, 127, 212, 211, 31,
	235, 52, 44, 81, 234, 200, 72, 171, 242, 42, 104, 162, 253, 58, 206, 204,
	181, 112, 14, 86, 8, 12, 118, 18, 191, 114, 19, 71, 156, 183, 93, 135,
	21, 161, 150, 41, 16, 123, 154, 199, 243, 145, 120, 111, 157, 158, 178, 177,
	50, 117, 25, 61, 255, 53, 138, 126, 109, 84, 198, 128, 195, 189, 13, 87,
	223, 245, 36, 169, 62, 168, 67, 201, 215, 121, 214, 246, 124, 34, 185, 3,
	224, 15, 236, 222, 122, 148, 176, 188, 220, 232, 40, 80, 78, 51, 10, 74,
	167, 151, 96, 115, 30, 0, 98, 68, 26, 184, 56, 130, 100, 159, 38, 65,
	173, 69, 70, 146, 39, 94, 85, 47, 140, 163, 165, 125, 105, 213, 149, 59,
	7, 88, 179, 64, 134, 172, 29, 247, 48, 55, 107, 228, 136, 217, 231, 137,
	225, 27, 131, 73, 76, 63, 248, 254, 141, 83, 170, 144, 202, 216, 133, 97,
	32, 113, 103, 164, 45, 43, 9, 91, 203, 155, 37, 208, 190, 229, 108, 82,
	89, 166, 116, 210, 230, 244, 180, 192, 209, 102, 175, 194, 57, 75, 99, 182,
}

// piInv is the inverse of pi, computed at start-up.
var piInv [256]byte

// lCoeff are the coefficients of the linear map l (RFC 7801 2.2.2), in
// memory order: lCoeff[i] multiplies b[i].
var lCoeff = [16]byte{148, 32, 133, 16, 194, 192, 1, 251, 1, 192, 194, 16, 133, 32, 148, 1}

// gfMul multiplies in GF(2^8) modulo p(x) = x^8 + x^7 + x^6 + x + 1.
func gfMul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 != 0 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0xC3 // p(x) without the x^8 term
		}
		b >>= 1
	}
	return p
}

// transformR is R(a15..a0) = l(a15..a0) || a15..a1.
func transformR(b *[16]byte) {
	var acc byte
	for i, v := range b {
		acc ^= gfMul(lCoeff[i], v)
	}
	copy(b[1:], b[:15])
	b[0] = acc
}

// transformRInv is the inverse of R.
func transformRInv(b *[16]byte) {
	first := b[0]
	copy(b[:15], b[1:])
	acc := first // lCoeff[15] == 1
	for i := 0; i < 15; i++ {
		acc ^= gfMul(lCoeff[i], b[i])
	}
	b[15] = acc
}

// transformL is L = R^16.
func transformL(b *[16]byte) {
	for i := 0; i < 16; i++ {
		transformR(b)
	}
}

// transformLInv is the inverse of L.
func transformLInv(b *[16]byte) {
	for i := 0; i < 16; i++ {
		transformRInv(b)
	}
}

// transformS applies pi to every byte.
func transformS(b *[16]byte) {
	for i, v := range b {
		b[i] = pi[v]
	}
}
