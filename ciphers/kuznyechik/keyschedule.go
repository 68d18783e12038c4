package kuznyechik

// expandKey derives the round keys (RFC 7801 section 4.3): K1 and K2 are the
// two halves of the key, and each further pair comes from eight Feistel
// rounds F[C](a1, a0) = (LSX[C](a1) ^ a0, a1) with constants C_i = L(Vec(i)).
func expandKey(c *Cipher, key []byte) {
	k := &c.enc
	k[0] = loadBlock(key[0:16])
	k[1] = loadBlock(key[16:32])
	a1, a0 := k[0], k[1]
	for i := 0; i < 4; i++ {
		for j := 1; j <= 8; j++ {
			cst := roundConstant(8*i + j)
			t := ls(block{a1.lo ^ cst.lo, a1.hi ^ cst.hi})
			a1, a0 = block{t.lo ^ a0.lo, t.hi ^ a0.hi}, a1
		}
		k[2*i+2], k[2*i+3] = a1, a0
	}

	// Decryption uses K1 and K10 as they are and L^-1 of the others.
	c.dec[0], c.dec[9] = k[0], k[9]
	for i := 1; i < 9; i++ {
		c.dec[i] = lInv(k[i])
	}
}

// roundConstant returns C_i = L(Vec128(i)): the number i in the last byte.
func roundConstant(i int) block {
	var b [16]byte
	b[15] = byte(i)
	transformL(&b)
	return toBlock(&b)
}
