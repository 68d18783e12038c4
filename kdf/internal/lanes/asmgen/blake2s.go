package main

import "fmt"

// BLAKE2s (RFC 7693) as VeraCrypt's HMAC-BLAKE2s uses it in PBKDF2: every
// compression is the final one over the 32-byte digest zero-padded to a
// block (counter 96, final flag), after a keyed state, so message words
// 8-15 are zero (their additions vanish) and v[12..15] are constants.
var blake2sSigma = [10][16]int{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	{14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
	{11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
	{7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
	{9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
	{2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
	{12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
	{13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
	{6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
	{10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
}

// blake2sV returns the initial v[8..15] of every PBKDF2 compression.
func blake2sV(iv [8]uint64) [8]uint64 {
	var v [8]uint64
	for i := range v {
		v[i] = iv[i] >> 32 // SHA-256's IV: the upper halves of SHA-512's
	}
	v[4] ^= 64 + 32    // the byte counter
	v[6] ^= 0xffffffff // the final-block flag
	return v
}

// blake2sGs lists the G calls of a compression: the four state words and
// the two message words.
func blake2sGs() [][6]int {
	var gs [][6]int
	for _, s := range blake2sSigma {
		for i, abcd := range [8][4]int{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15},
			{0, 5, 10, 15}, {1, 6, 11, 12}, {2, 7, 8, 13}, {3, 4, 9, 14}} {
			gs = append(gs, [6]int{abcd[0], abcd[1], abcd[2], abcd[3], s[2*i], s[2*i+1]})
		}
	}
	return gs
}

// blake2sAVX512: v[0..15] in registers 0-15, message words 0-7 in 16-23,
// temporaries 24-31. The eight G of a round go as two groups of four
// independent ones, an instruction of each in turn.
type blake2sAVX512 struct {
	g    *gen
	reg_ string
	pool *pool
}

func (a *blake2sAVX512) r(i int) string { return fmt.Sprintf("%s%d", a.reg_, i) }

func (a *blake2sAVX512) kernel(name string) {
	g := a.g
	_, iv := sha2Constants()
	v8 := blake2sV(iv)
	g.l("// func %s(s *State, lane, n int)", name)
	g.l("TEXT ·%s(SB), NOSPLIT, $0-24", name)
	g.l("MOVQ s+0(FP), AX")
	g.l("MOVQ lane+8(FP), BX")
	g.l("LEAQ (AX)(BX*4), AX")
	g.l("MOVQ n+16(FP), CX")
	for j := 0; j < 8; j++ {
		g.l("VMOVDQU64 %d(AX), %s", rowOff(secU, j), a.r(16+j))
	}
	g.l("iter:")
	g.l("MOVQ AX, SI")
	g.l("MOVL $2, DX")
	g.l("pass:")
	for j := 0; j < 8; j++ {
		g.l("VMOVDQU64 %d(SI), %s", j*rowBytes, a.r(j))
		g.l("VPBROADCASTD %s, %s", a.pool.sym(v8[j]), a.r(8+j))
	}
	gs := blake2sGs()
	for q := 0; q < len(gs); q += 4 {
		four := gs[q : q+4]
		each := func(f func(a, b, c, d, x, y string)) {
			for _, gg := range four {
				x, y := "", ""
				if gg[4] < 8 {
					x = a.r(16 + gg[4])
				}
				if gg[5] < 8 {
					y = a.r(16 + gg[5])
				}
				f(a.r(gg[0]), a.r(gg[1]), a.r(gg[2]), a.r(gg[3]), x, y)
			}
		}
		for half, rots := range [2][2]int{{16, 12}, {8, 7}} {
			each(func(A, B, C, D, x, y string) {
				g.l("VPADDD %s, %s, %s", B, A, A)
				if m := [2]string{x, y}[half]; m != "" {
					g.l("VPADDD %s, %s, %s", m, A, A)
				}
			})
			each(func(A, B, C, D, x, y string) { g.l("VPXORD %s, %s, %s", A, D, D) })
			each(func(A, B, C, D, x, y string) { g.l("VPRORD $%d, %s, %s", rots[0], D, D) })
			each(func(A, B, C, D, x, y string) { g.l("VPADDD %s, %s, %s", D, C, C) })
			each(func(A, B, C, D, x, y string) { g.l("VPXORD %s, %s, %s", C, B, B) })
			each(func(A, B, C, D, x, y string) { g.l("VPRORD $%d, %s, %s", rots[1], B, B) })
		}
	}
	// h ^= v[i] ^ v[i+8]: the next message.
	for j := 0; j < 8; j++ {
		g.l("VPTERNLOGD $0x96, %d(SI), %s, %s", j*rowBytes, a.r(8+j), a.r(j))
		g.l("VMOVDQA64 %s, %s", a.r(j), a.r(16+j))
	}
	g.l("ADDQ $%d, SI", secBytes)
	g.l("DECL DX")
	g.l("JNZ pass")
	for j := 0; j < 8; j++ {
		off := rowOff(secAcc, j)
		g.l("VPXORD %d(AX), %s, %s", off, a.r(16+j), a.r(24))
		g.l("VMOVDQU64 %s, %d(AX)", a.r(24), off)
	}
	g.l("DECQ CX")
	g.l("JNZ iter")
	for j := 0; j < 8; j++ {
		g.l("VMOVDQU64 %s, %d(AX)", a.r(16+j), rowOff(secU, j))
	}
	g.comment("leave no key material in the vector registers")
	for i := 0; i < 32; i++ {
		g.l("VPXORQ %s, %s, %s", a.r(i), a.r(i), a.r(i))
	}
	g.l("VZEROUPPER")
	g.l("RET")
	g.l("")
}

// blake2sNEON: v[0..15] in V0-V15 (renamed as rotations land in fresh
// registers), message words in V16-V23, temporaries from V24 up and the
// registers rotations free; R3 points at the constants.
type blake2sNEON struct {
	g    *gen
	pool *pool
}

func (a *blake2sNEON) kernel(name string) {
	g := a.g
	_, iv := sha2Constants()
	v8 := blake2sV(iv)
	g.l("// func %s(s *State, lane, n int)", name)
	g.l("TEXT ·%s(SB), NOSPLIT, $0-24", name)
	g.l("MOVD s+0(FP), R0")
	g.l("MOVD lane+8(FP), R1")
	g.l("ADD R1<<2, R0, R0")
	g.l("MOVD n+16(FP), R1")
	g.l("MOVD $%s<>(SB), R3", a.pool.name)
	for j := 0; j < 8; j++ {
		g.l("FMOVQ %d(R0), F%d", rowOff(secU, j), 16+j)
	}
	g.l("iter:")
	g.l("MOVD R0, R4")
	g.l("MOVD $2, R2")
	g.l("pass:")
	var v [16]string
	for j := 0; j < 8; j++ {
		v[j], v[8+j] = fmt.Sprintf("V%d", j), fmt.Sprintf("V%d", 8+j)
		g.l("FMOVQ %d(R4), F%d", j*rowBytes, j)
		g.l("FMOVQ %d(R3), F%d", a.pool.ref(v8[j]), 8+j)
	}
	free := []string{}
	for i := 24; i < 32; i++ {
		free = append(free, fmt.Sprintf("V%d", i))
	}
	// rorx sets v[i] = ror(v[i] ^ v[j], n) through a fresh register.
	rorx := func(i, j, n int) {
		t := free[0]
		g.l("VEOR %s.B16, %s.B16, %s.B16", v[j], v[i], v[i])
		g.l("VUSHR $%d, %s.S4, %s.S4", n, v[i], t)
		g.l("VSLI $%d, %s.S4, %s.S4", 32-n, v[i], t)
		free = append(free[1:], v[i])
		v[i] = t
	}
	for _, gg := range blake2sGs() {
		A, B, C, D := gg[0], gg[1], gg[2], gg[3]
		for half, rots := range [2][2]int{{16, 12}, {8, 7}} {
			g.l("VADD %s.S4, %s.S4, %s.S4", v[B], v[A], v[A])
			if m := gg[4+half]; m < 8 {
				g.l("VADD V%d.S4, %s.S4, %s.S4", 16+m, v[A], v[A])
			}
			rorx(D, A, rots[0])
			g.l("VADD %s.S4, %s.S4, %s.S4", v[D], v[C], v[C])
			rorx(B, C, rots[1])
		}
	}
	for j := 0; j < 8; j++ {
		t := free[0]
		g.l("FMOVQ %d(R4), F%s", j*rowBytes, t[1:])
		g.l("VEOR %s.B16, %s.B16, V%d.B16", v[8+j], v[j], 16+j)
		g.l("VEOR %s.B16, V%d.B16, V%d.B16", t, 16+j, 16+j)
	}
	g.l("ADD $%d, R4, R4", secBytes)
	g.l("SUBS $1, R2, R2")
	g.l("BNE pass")
	for j := 0; j < 8; j++ {
		off := rowOff(secAcc, j)
		g.l("FMOVQ %d(R0), F24", off)
		g.l("VEOR V%d.B16, V24.B16, V24.B16", 16+j)
		g.l("FMOVQ F24, %d(R0)", off)
	}
	g.l("SUBS $1, R1, R1")
	g.l("BNE iter")
	for j := 0; j < 8; j++ {
		g.l("FMOVQ F%d, %d(R0)", 16+j, rowOff(secU, j))
	}
	g.comment("leave no key material in the vector registers")
	for i := 0; i < 32; i++ {
		g.l("VEOR V%d.B16, V%d.B16, V%d.B16", i, i, i)
	}
	g.l("RET")
	g.l("")
}
