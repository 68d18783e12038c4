package twofish

// Field polynomials of the paper: the MDS matrix works in GF(2^8) modulo
// v(x) = x^8+x^6+x^5+x^3+1, the Reed-Solomon code of the key schedule modulo
// w(x) = x^8+x^6+x^3+x^2+1.
const (
	mdsPoly = 0x169
	rsPoly  = 0x14D
)

// gfMul multiplies a and b in GF(2^8) modulo poly. Only the key schedule
// uses it, so it favours clarity over speed.
func gfMul(a, b byte, poly uint) byte {
	var r uint
	x, y := uint(a), uint(b)
	for y != 0 {
		if y&1 != 0 {
			r ^= x
		}
		x <<= 1
		if x&0x100 != 0 {
			x ^= poly
		}
		y >>= 1
	}
	return byte(r)
}

// mds is the 4x4 maximum distance separable matrix of the g function.
var mds = [4][4]byte{
	{0x01, 0xEF, 0x5B, 0x5B},
	{0x5B, 0xEF, 0xEF, 0x01},
	{0xEF, 0x5B, 0x01, 0xEF},
	{0xEF, 0x01, 0xEF, 0x5B},
}

// rs is the 4x8 Reed-Solomon matrix that derives the S-box key words.
var rs = [4][8]byte{
	{0x01, 0xA4, 0x55, 0x87, 0x5A, 0x58, 0xDB, 0x9E},
	{0xA4, 0x56, 0x82, 0xF3, 0x1E, 0xC6, 0x68, 0xE5},
	{0x02, 0xA1, 0xFC, 0xC1, 0x47, 0xAE, 0x3D, 0x19},
	{0xA4, 0x55, 0x87, 0x5A, 0x58, 0xDB, 0x9E, 0x03},
}

// mdsColumn returns column j of the MDS matrix multiplied by y, packed
// little-endian (row i in byte i).
func mdsColumn(j int, y byte) uint32 {
	var z uint32
	for i := 0; i < 4; i++ {
		z |= uint32(gfMul(mds[i][j], y, mdsPoly)) << (8 * i)
	}
	return z
}
