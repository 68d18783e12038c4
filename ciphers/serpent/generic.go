package serpent

import (
	"encoding/binary"
	"math/bits"
)

// sboxFunc is one bitsliced S-box: bit j of the four words forms one nibble.
type sboxFunc func(x0, x1, x2, x3 uint32) (uint32, uint32, uint32, uint32)

var (
	sboxForward = [8]sboxFunc{sb0, sb1, sb2, sb3, sb4, sb5, sb6, sb7}
	sboxInverse = [8]sboxFunc{sbi0, sbi1, sbi2, sbi3, sbi4, sbi5, sbi6, sbi7}
)

// linear is Serpent's linear transformation LT.
func linear(x0, x1, x2, x3 uint32) (uint32, uint32, uint32, uint32) {
	x0 = bits.RotateLeft32(x0, 13)
	x2 = bits.RotateLeft32(x2, 3)
	x1 ^= x0 ^ x2
	x3 ^= x2 ^ x0<<3
	x1 = bits.RotateLeft32(x1, 1)
	x3 = bits.RotateLeft32(x3, 7)
	x0 ^= x1 ^ x3
	x2 ^= x3 ^ x1<<7
	x0 = bits.RotateLeft32(x0, 5)
	x2 = bits.RotateLeft32(x2, 22)
	return x0, x1, x2, x3
}

// linearInverse undoes linear.
func linearInverse(x0, x1, x2, x3 uint32) (uint32, uint32, uint32, uint32) {
	x2 = bits.RotateLeft32(x2, -22)
	x0 = bits.RotateLeft32(x0, -5)
	x2 ^= x3 ^ x1<<7
	x0 ^= x1 ^ x3
	x3 = bits.RotateLeft32(x3, -7)
	x1 = bits.RotateLeft32(x1, -1)
	x3 ^= x2 ^ x0<<3
	x1 ^= x0 ^ x2
	x2 = bits.RotateLeft32(x2, -3)
	x0 = bits.RotateLeft32(x0, -13)
	return x0, x1, x2, x3
}

// encryptGeneric encrypts whole blocks one at a time in portable Go.
func encryptGeneric(rk *[132]uint32, dst, src []byte) {
	for len(src) >= BlockSize {
		x0 := binary.LittleEndian.Uint32(src[0:])
		x1 := binary.LittleEndian.Uint32(src[4:])
		x2 := binary.LittleEndian.Uint32(src[8:])
		x3 := binary.LittleEndian.Uint32(src[12:])
		// Direct calls (not through sboxForward) let the compiler inline.
		for r := 0; r < 32; r += 8 {
			k := (*[32]uint32)(rk[4*r:])
			x0, x1, x2, x3 = linear(sb0(x0^k[0], x1^k[1], x2^k[2], x3^k[3]))
			x0, x1, x2, x3 = linear(sb1(x0^k[4], x1^k[5], x2^k[6], x3^k[7]))
			x0, x1, x2, x3 = linear(sb2(x0^k[8], x1^k[9], x2^k[10], x3^k[11]))
			x0, x1, x2, x3 = linear(sb3(x0^k[12], x1^k[13], x2^k[14], x3^k[15]))
			x0, x1, x2, x3 = linear(sb4(x0^k[16], x1^k[17], x2^k[18], x3^k[19]))
			x0, x1, x2, x3 = linear(sb5(x0^k[20], x1^k[21], x2^k[22], x3^k[23]))
			x0, x1, x2, x3 = linear(sb6(x0^k[24], x1^k[25], x2^k[26], x3^k[27]))
			x0, x1, x2, x3 = sb7(x0^k[28], x1^k[29], x2^k[30], x3^k[31])
			if r < 24 {
				x0, x1, x2, x3 = linear(x0, x1, x2, x3)
			}
		}
		k := rk[128:132]
		binary.LittleEndian.PutUint32(dst[0:], x0^k[0])
		binary.LittleEndian.PutUint32(dst[4:], x1^k[1])
		binary.LittleEndian.PutUint32(dst[8:], x2^k[2])
		binary.LittleEndian.PutUint32(dst[12:], x3^k[3])
		src, dst = src[BlockSize:], dst[BlockSize:]
	}
}

// decryptGeneric is the inverse of encryptGeneric.
func decryptGeneric(rk *[132]uint32, dst, src []byte) {
	for len(src) >= BlockSize {
		k := rk[128:132]
		x0 := binary.LittleEndian.Uint32(src[0:]) ^ k[0]
		x1 := binary.LittleEndian.Uint32(src[4:]) ^ k[1]
		x2 := binary.LittleEndian.Uint32(src[8:]) ^ k[2]
		x3 := binary.LittleEndian.Uint32(src[12:]) ^ k[3]
		for r := 24; r >= 0; r -= 8 {
			k := (*[32]uint32)(rk[4*r:])
			if r < 24 {
				x0, x1, x2, x3 = linearInverse(x0, x1, x2, x3)
			}
			x0, x1, x2, x3 = sbi7(x0, x1, x2, x3)
			x0, x1, x2, x3 = linearInverse(x0^k[28], x1^k[29], x2^k[30], x3^k[31])
			x0, x1, x2, x3 = sbi6(x0, x1, x2, x3)
			x0, x1, x2, x3 = linearInverse(x0^k[24], x1^k[25], x2^k[26], x3^k[27])
			x0, x1, x2, x3 = sbi5(x0, x1, x2, x3)
			x0, x1, x2, x3 = linearInverse(x0^k[20], x1^k[21], x2^k[22], x3^k[23])
			x0, x1, x2, x3 = sbi4(x0, x1, x2, x3)
			x0, x1, x2, x3 = linearInverse(x0^k[16], x1^k[17], x2^k[18], x3^k[19])
			x0, x1, x2, x3 = sbi3(x0, x1, x2, x3)
			x0, x1, x2, x3 = linearInverse(x0^k[12], x1^k[13], x2^k[14], x3^k[15])
			x0, x1, x2, x3 = sbi2(x0, x1, x2, x3)
			x0, x1, x2, x3 = linearInverse(x0^k[8], x1^k[9], x2^k[10], x3^k[11])
			x0, x1, x2, x3 = sbi1(x0, x1, x2, x3)
			x0, x1, x2, x3 = linearInverse(x0^k[4], x1^k[5], x2^k[6], x3^k[7])
			x0, x1, x2, x3 = sbi0(x0, x1, x2, x3)
			x0, x1, x2, x3 = x0^k[0], x1^k[1], x2^k[2], x3^k[3]
		}
		binary.LittleEndian.PutUint32(dst[0:], x0)
		binary.LittleEndian.PutUint32(dst[4:], x1)
		binary.LittleEndian.PutUint32(dst[8:], x2)
		binary.LittleEndian.PutUint32(dst[12:], x3)
		src, dst = src[BlockSize:], dst[BlockSize:]
	}
}
