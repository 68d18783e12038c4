package whirlpool

// The Whirlpool S-box is built, as the specification defines it, from three
// 4-bit mini-boxes E, E^-1 and R arranged in a small substitution-permutation
// network; the circulant MDS matrix C = cir(1, 1, 4, 1, 8, 5, 2, 9) works
// over GF(2^8) reduced by x^8 + x^4 + x^3 + x^2 + 1 (0x11d). Building the
// tables at start-up instead of pasting 16 KiB of hex keeps the source
// checkable against the paper (Barreto & Rijmen, "The Whirlpool hashing
// function", 2003 revision, section 6.1).

const rounds = 10

var (
	miniE = [16]byte{0x1, 0xb, 0x9, 0xc, 0xd, 0x6, 0xf, 0x3, 0xe, 0x8, 0x7, 0x4, 0xa, 0x2, 0x5, 0x0}
	miniR = [16]byte{0x7, 0xc, 0xb, 0xd, 0xe, 0x4, 0x9, 0xf, 0x6, 0x3, 0x8, 0xa, 0x2, 0x5, 0x1, 0x0}

	// sbox is the 8-bit substitution box gamma applies to every byte.
	sbox [256]byte

	// ct[j] combines gamma and theta: ct[j][x] is the row vector S[x]
	// times row j of C, packed big-endian (column 0 in the top byte). Row j
	// of a circulant matrix is row 0 rotated right by j bytes. One array,
	// so the round function addresses all eight from a single base
	// register.
	ct [8][256]uint64

	// rc holds the round constants c^r: row 0 only, the other seven rows
	// are zero.
	rc [rounds]uint64
)

// gfMul multiplies in GF(2^8) modulo x^8 + x^4 + x^3 + x^2 + 1.
func gfMul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 != 0 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0x1d
		}
		b >>= 1
	}
	return p
}

func init() {
	var miniEInv [16]byte
	for i, v := range miniE {
		miniEInv[v] = byte(i)
	}
	for x := 0; x < 256; x++ {
		a := miniE[x>>4]
		b := miniEInv[x&15]
		r := miniR[a^b]
		sbox[x] = miniE[a^r]<<4 | miniEInv[b^r]
	}
	row := [8]byte{1, 1, 4, 1, 8, 5, 2, 9}
	for x := 0; x < 256; x++ {
		var v uint64
		for k := 0; k < 8; k++ {
			v = v<<8 | uint64(gfMul(sbox[x], row[k]))
		}
		for j := range ct {
			ct[j][x] = v>>(8*j) | v<<(64-8*j)
		}
	}
	for r := 0; r < rounds; r++ {
		var v uint64
		for j := 0; j < 8; j++ {
			v = v<<8 | uint64(sbox[8*r+j])
		}
		rc[r] = v
	}
	initArch()
}
