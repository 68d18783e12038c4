package twofish

import "math/bits"

// qBeforeKey[i][j] selects q0 or q1 for byte position j in the stage of the
// h function that is followed by the XOR with key word L_i (paper 4.3.2);
// qLast is the final stage, after L_0.
var (
	qBeforeKey = [4][4]uint8{
		{0, 0, 1, 1}, // L_0
		{0, 1, 0, 1}, // L_1
		{1, 1, 0, 0}, // L_2 (192- and 256-bit keys)
		{1, 0, 0, 1}, // L_3 (256-bit keys)
	}
	qLast = [4]uint8{1, 0, 1, 0}
)

// mdsTables[j][y] is column j of the MDS matrix multiplied by y.
var mdsTables = func() (t [4][256]uint32) {
	for j := range t {
		for y := range t[j] {
			t[j][y] = mdsColumn(j, byte(y))
		}
	}
	return t
}()

// sboxByte is the key-dependent byte permutation of position j of the h
// function: the chain of q permutations and XORs with byte j of the words of
// l, without the MDS multiplication.
func sboxByte(j int, x byte, l []uint32) byte {
	for i := len(l) - 1; i >= 0; i-- {
		x = qTables[qBeforeKey[i][j]][x] ^ byte(l[i]>>(8*j))
	}
	return qTables[qLast[j]][x]
}

// h is the function h(X, L) of the paper.
func h(x uint32, l []uint32) uint32 {
	var z uint32
	for j := 0; j < 4; j++ {
		z ^= mdsTables[j][sboxByte(j, byte(x>>(8*j)), l)]
	}
	return z
}

// rsWord multiplies 8 key bytes by the RS matrix, giving one S-box key word.
func rsWord(m []byte) uint32 {
	var s uint32
	for i := 0; i < 4; i++ {
		var b byte
		for j := 0; j < 8; j++ {
			b ^= gfMul(rs[i][j], m[j], rsPoly)
		}
		s |= uint32(b) << (8 * i)
	}
	return s
}

// expandKey fills the 40 round subkeys and the four key-dependent S-box
// tables fused with the MDS matrix ("full keying", paper section 7.3), so a
// g evaluation is four table loads and three XORs.
func (c *Cipher) expandKey(key []byte) {
	k := len(key) / 8
	var me, mo [4]uint32
	for i := 0; i < k; i++ {
		me[i] = leUint32(key[8*i:])
		mo[i] = leUint32(key[8*i+4:])
	}
	sbox := sboxKey(key)
	const rho = 0x01010101
	for i := uint32(0); i < 20; i++ {
		a := h(2*i*rho, me[:k])
		b := bits.RotateLeft32(h((2*i+1)*rho, mo[:k]), 8)
		c.k[2*i] = a + b
		c.k[2*i+1] = bits.RotateLeft32(a+2*b, 9)
	}
	for j := 0; j < 4; j++ {
		for x := 0; x < 256; x++ {
			c.s[j][x] = mdsTables[j][sboxByte(j, byte(x), sbox[:k])]
		}
	}
	clear(me[:])
	clear(mo[:])
	clear(sbox[:])
}

// sboxKey returns the S-box key words as the list L = (S_{k-1}, ..., S_0)
// that h takes, where S_i is the RS code of key bytes 8i..8i+7: the last 8
// key bytes give L_0. Only the first len(key)/8 words are used.
func sboxKey(key []byte) (l [4]uint32) {
	k := len(key) / 8
	for i := 0; i < k; i++ {
		l[k-1-i] = rsWord(key[8*i : 8*i+8])
	}
	return l
}

func leUint32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
