package kuznyechik

// encryptBlocks applies E = X[K10] LSX[K9] ... LSX[K1] to every block, two
// blocks at a time so the CPU overlaps their independent table lookups.
func encryptBlocks(c *Cipher, dst, src []byte) {
	k := &c.enc
	for len(src) >= 2*BlockSize {
		a := loadBlock(src[0:16])
		b := loadBlock(src[16:32])
		for i := 0; i < 9; i++ {
			a = ls(block{a.lo ^ k[i].lo, a.hi ^ k[i].hi})
			b = ls(block{b.lo ^ k[i].lo, b.hi ^ k[i].hi})
		}
		storeBlock(dst[0:16], block{a.lo ^ k[9].lo, a.hi ^ k[9].hi})
		storeBlock(dst[16:32], block{b.lo ^ k[9].lo, b.hi ^ k[9].hi})
		src, dst = src[2*BlockSize:], dst[2*BlockSize:]
	}
	if len(src) >= BlockSize {
		a := loadBlock(src[0:16])
		for i := 0; i < 9; i++ {
			a = ls(block{a.lo ^ k[i].lo, a.hi ^ k[i].hi})
		}
		storeBlock(dst[0:16], block{a.lo ^ k[9].lo, a.hi ^ k[9].hi})
	}
}

// decryptBlocks applies D = X[K1] S^-1 L^-1 X[K2] ... S^-1 L^-1 X[K10].
//
// S^-1 then L^-1 is not separable by bytes, but L^-1 then S^-1 of the next
// round is, once the round keys are moved through L^-1: with b = L^-1(a),
// each middle round becomes b' = L^-1(S^-1(b)) ^ L^-1(K_i), a table lookup
// per byte. The first L^-1 and the last S^-1 are done on their own.
func decryptBlocks(c *Cipher, dst, src []byte) {
	k := &c.dec
	for len(src) >= 2*BlockSize {
		a := loadBlock(src[0:16])
		b := loadBlock(src[16:32])
		a = lInv(block{a.lo ^ k[9].lo, a.hi ^ k[9].hi})
		b = lInv(block{b.lo ^ k[9].lo, b.hi ^ k[9].hi})
		for i := 8; i >= 1; i-- {
			a = ils(a)
			b = ils(b)
			a = block{a.lo ^ k[i].lo, a.hi ^ k[i].hi}
			b = block{b.lo ^ k[i].lo, b.hi ^ k[i].hi}
		}
		finishDecrypt(dst[0:16], a, k[0])
		finishDecrypt(dst[16:32], b, k[0])
		src, dst = src[2*BlockSize:], dst[2*BlockSize:]
	}
	if len(src) >= BlockSize {
		a := loadBlock(src[0:16])
		a = lInv(block{a.lo ^ k[9].lo, a.hi ^ k[9].hi})
		for i := 8; i >= 1; i-- {
			a = ils(a)
			a = block{a.lo ^ k[i].lo, a.hi ^ k[i].hi}
		}
		finishDecrypt(dst[0:16], a, k[0])
	}
}

// finishDecrypt applies the last S^-1 and X[K1] and stores the block.
func finishDecrypt(dst []byte, a, k1 block) {
	s := mapBytes(a, &piInv)
	storeBlock(dst, block{s.lo ^ k1.lo, s.hi ^ k1.hi})
}
