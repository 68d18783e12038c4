package camellia

import "math/bits"

// Camellia's S-box is affine-equivalent to inversion in GF(2^8):
//
//	s1(x) = B·inv(A·(x ^ 0xc5)) ^ 0x6e
//
// with A and B linear over GF(2) and inv the inverse in AES's field
// (x^8+x^4+x^3+x+1). This is what lets the amd64 kernel compute the S-boxes
// of 64 bytes at once with GF2P8AFFINEQB (x -> A·x ^ A·0xc5) followed by
// GF2P8AFFINEINVQB (x -> B·inv(x) ^ 0x6e). SBOX2..4 are rotations, folded
// into the matrices: s2 = rotl1∘s1, s3 = rotr1∘s1, s4 = s1∘rotl1.
//
// A and B are given by the images of the unit vectors 1, 2, 4, ..., 0x80.
// They were found with the linear-equivalence algorithm of Biryukov, De
// Cannière, Braeken and Preneel ("A Toolbox for Cryptanalysis: Linear and
// Affine Equivalence Algorithms", EUROCRYPT 2003); TestGFNIDecomposition
// re-derives them that way and checks the identity for every input, so
// nothing here is taken on trust. The constants 0xc5 and 0x6e are those of
// the Camellia specification's algebraic description of s1.
var (
	sboxPreImages  = [8]byte{0x01, 0x19, 0xb1, 0xab, 0xa7, 0x93, 0x61, 0xd9} // A
	sboxPostImages = [8]byte{0xf1, 0xbb, 0x8e, 0x09, 0xfa, 0xd7, 0x21, 0xe1} // B
)

const (
	sboxInConst  = 0xc5
	sboxOutConst = 0x6e
)

// linearMap is an 8x8 bit matrix over GF(2) given by the images of the unit
// vectors: m[j] is the image of 1<<j.
type linearMap [8]byte

func (m linearMap) apply(x byte) byte {
	var y byte
	for j := 0; j < 8; j++ {
		if x>>j&1 != 0 {
			y ^= m[j]
		}
	}
	return y
}

// then returns the map x -> f(m(x)).
func (m linearMap) then(f func(byte) byte) linearMap {
	var r linearMap
	for j := range r {
		r[j] = f(m[j])
	}
	return r
}

// rotl1Map is the linear map x -> x <<< 1.
var rotl1Map = linearMap{0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x01}

// affineQword encodes m as the matrix operand of GF2P8AFFINEQB and
// GF2P8AFFINEINVQB: output bit i is the parity of x AND byte 7-i of the
// qword, so byte 7-i holds row i, whose bit j is bit i of m[j].
func affineQword(m linearMap) uint64 {
	var q uint64
	for i := 0; i < 8; i++ {
		var row byte
		for j := 0; j < 8; j++ {
			row |= (m[j] >> i & 1) << j
		}
		q |= uint64(row) << (8 * (7 - i))
	}
	return q
}

func rotl8(x byte) byte { return bits.RotateLeft8(x, 1) }
func rotr8(x byte) byte { return bits.RotateLeft8(x, -1) }

// gfniMatrices holds the qword operands the amd64 kernel broadcasts, in this
// order: pre-map for s1/s2/s3, pre-map for s4, post-maps for s1 (and s4), s2
// and s3, and the "top bit to bit 0" map used for the FL-layer rotation.
var gfniMatrices [6]uint64

// Immediate operands matching gfniMatrices (computed for the generator and
// the tests; the assembly has them as literals).
var (
	gfniPreConst  = linearMap(sboxPreImages).apply(sboxInConst)
	gfniPostConst = [3]byte{sboxOutConst, rotl8(sboxOutConst), rotr8(sboxOutConst)}
)

func init() {
	a := linearMap(sboxPreImages)
	b := linearMap(sboxPostImages)
	var aRot linearMap // A∘rotl1: x -> A(rotl1(x))
	for j := range aRot {
		aRot[j] = a.apply(rotl1Map[j])
	}
	gfniMatrices = [6]uint64{
		affineQword(a),
		affineQword(aRot),
		affineQword(b),
		affineQword(b.then(rotl8)),
		affineQword(b.then(rotr8)),
		affineQword(linearMap{0, 0, 0, 0, 0, 0, 0, 0x01}), // bit 7 -> bit 0
	}
}
