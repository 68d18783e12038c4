package main

import "fmt"

// avx512 writes a kernel with one lane per 64- or 32-bit element of zmm
// (8 or 16 lanes) or ymm (4 or 8 lanes, which needs AVX-512VL): all 32
// registers hold the working state, the sixteen-word message window and
// temporaries, the rotations are VPRORQ/VPRORD and the three-input
// functions (Σ's xors, Ch, Maj) one VPTERNLOG each.
//
// Registers: 0-7 the state a..h (renamed, not moved, each round), 8-23
// the schedule window (W[t] in 8+t%16), 24-27 round temporaries, 28-31
// schedule temporaries. AX points at the group's first lane in the
// State, SI at the keyed state of the current compression, CX counts
// iterations and DX the two compressions of one.
type avx512 struct {
	g    *gen
	s    *spec
	reg  string // "Z" or "Y"
	sfx  string // "Q" or "D"
	pool *pool
}

func (a *avx512) r(i int) string { return fmt.Sprintf("%s%d", a.reg, i) }

// op writes a three-operand instruction: dst = src1 op src2, in Go order.
func (a *avx512) op(mn string, src2, src1, dst string) {
	a.g.l("%s%s %s, %s, %s", mn, a.sfx, src2, src1, dst)
}

func (a *avx512) ror(n int, src, dst string) { a.g.l("VPROR%s $%d, %s, %s", a.sfx, n, src, dst) }

// tern sets dst to f(dst, y, z) by truth table imm (bit index dst*4+y*2+z).
func (a *avx512) tern(imm int, z, y, dst string) {
	a.g.l("VPTERNLOG%s $0x%02x, %s, %s, %s", a.sfx, imm, z, y, dst)
}

func (a *avx512) mov(src, dst string) {
	a.g.l("VMOVDQA64 %s, %s", src, dst)
}

// sigma sets dst to rotr(x,r0) ^ rotr(x,r1) ^ (rotr or shr)(x,r2) using t1, t2.
func (a *avx512) sigma(x string, r [3]int, shift bool, dst, t1, t2 string) {
	a.ror(r[0], x, dst)
	a.ror(r[1], x, t1)
	if shift {
		a.g.l("VPSRL%s $%d, %s, %s", a.sfx, r[2], x, t2)
	} else {
		a.ror(r[2], x, t2)
	}
	a.tern(0x96, t2, t1, dst)
}

func (a *avx512) bcst(v uint64) string { return a.pool.sym(v) }

func (a *avx512) add(src2, src1, dst string) { a.op("VPADD", src2, src1, dst) }

func (a *avx512) addConst(v uint64, src, dst string) {
	a.g.l("VPADD%s.BCST %s, %s, %s", a.sfx, a.bcst(v), src, dst)
}

// round writes round t with the state named st (a..h).
func (a *avx512) round(t int, st [8]string, w word) {
	s := a.s
	A, B, C, D, E, F, G, H := st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7]
	t0, t1, t2, t3 := a.r(24), a.r(25), a.r(26), a.r(27)
	// h + K[t] + W[t] first: it does not wait for this round's e.
	if w.isConst {
		a.addConst((s.k[t]+w.val)&s.mask(), H, H)
	} else {
		a.add(a.r(8+t%16), H, H)
		a.addConst(s.k[t], H, H)
	}
	a.sigma(E, s.bigSigma1, false, t0, t1, t2)
	a.mov(E, t3)
	a.tern(0xca, G, F, t3) // Ch: e ? f : g
	a.add(t3, t0, t0)
	a.add(t0, H, H) // h = T1
	a.add(H, D, D)
	a.sigma(A, s.bigSigma0, false, t0, t1, t2)
	a.mov(A, t3)
	a.tern(0xe8, C, B, t3) // Maj
	a.add(t3, t0, t0)
	a.add(t0, H, H) // h = T1 + T2, the next a
}

// scheduleWord writes W[t] (t >= 16) into its window register.
func (a *avx512) scheduleWord(t int, w word) {
	s := a.s
	dst := a.r(8 + t%16)
	x0, x1, x2, x3 := a.r(28), a.r(29), a.r(30), a.r(31)
	var addends []string
	for _, tm := range w.terms {
		src := a.r(8 + tm.src%16)
		switch tm.sigma {
		case 0:
			a.sigma(src, s.smallSigma0, true, x0, x1, x2)
			addends = append(addends, x0)
		case 1:
			a.sigma(src, s.smallSigma1, true, x3, x1, x2)
			addends = append(addends, x3)
		default:
			addends = append(addends, src)
		}
	}
	a.sum(addends, dst, w.c)
}

// sum sets dst to the sum of addends (dst itself may be one of them) and c.
func (a *avx512) sum(addends []string, dst string, c uint64) {
	acc := ""
	for _, r := range addends {
		if r == dst {
			acc = dst
		}
	}
	for _, r := range addends {
		switch {
		case r == dst:
		case acc == "":
			acc = r
		default:
			a.add(r, acc, dst)
			acc = dst
		}
	}
	if acc != dst {
		a.mov(acc, dst)
	}
	if c != 0 {
		a.addConst(c, dst, dst)
	}
}

// lanes is the number of chains one register holds.
func (a *avx512) lanes() int {
	bits := 512
	if a.reg == "Y" {
		bits = 256
	}
	return bits / a.s.bits
}

func (a *avx512) load(off int, base, dst string) {
	a.g.l("VMOVDQU64 %d(%s), %s", off, base, dst)
}

func (a *avx512) store(src string, off int, base string) {
	a.g.l("VMOVDQU64 %s, %d(%s)", src, off, base)
}

// kernel writes the whole function.
func (a *avx512) kernel(name string) {
	g, s := a.g, a.s
	g.l("// func %s(s *State, lane, n int)", name)
	g.l("TEXT ·%s(SB), NOSPLIT, $0-24", name)
	g.l("MOVQ s+0(FP), AX")
	g.l("MOVQ lane+8(FP), BX")
	g.l("LEAQ (AX)(BX*%d), AX", s.bits/8)
	g.l("MOVQ n+16(FP), CX")
	for j := 0; j < 8; j++ {
		a.load(rowOff(secU, j), "AX", a.r(8+j))
	}
	g.l("iter:")
	g.l("MOVQ AX, SI")
	g.l("MOVL $2, DX")
	g.l("pass:")
	g.comment("one compression: state = keyed state at SI, message W[0..7] + padding")
	for j := 0; j < 8; j++ {
		a.load(j*rowBytes, "SI", a.r(j))
	}
	sched := s.schedule()
	st := [8]string{}
	for j := range st {
		st[j] = a.r(j)
	}
	for t := 0; t < s.rounds; t++ {
		a.round(t, st, sched[t])
		st = [8]string{st[7], st[0], st[1], st[2], st[3], st[4], st[5], st[6]}
		if t+16 < s.rounds {
			a.scheduleWord(t+16, sched[t+16])
		}
	}
	for j := 0; j < 8; j++ {
		a.g.l("VPADD%s %d(SI), %s, %s", a.sfx, j*rowBytes, a.r(j), a.r(j))
		a.mov(a.r(j), a.r(8+j))
	}
	g.l("ADDQ $%d, SI", secBytes)
	g.l("DECL DX")
	g.l("JNZ pass")
	g.comment("T ^= U")
	for j := 0; j < 8; j++ {
		off := rowOff(secAcc, j)
		g.l("VPXOR%s %d(AX), %s, %s", a.sfx, off, a.r(8+j), a.r(24))
		a.store(a.r(24), off, "AX")
	}
	g.l("DECQ CX")
	g.l("JNZ iter")
	for j := 0; j < 8; j++ {
		a.store(a.r(8+j), rowOff(secU, j), "AX")
	}
	g.comment("leave no key material in the vector registers")
	for i := 0; i < 32; i++ {
		g.l("VPXORQ %s, %s, %s", a.r(i), a.r(i), a.r(i))
	}
	g.l("VZEROUPPER")
	g.l("RET")
	g.l("")
}
