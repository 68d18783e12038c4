package main

import "fmt"

// avx2 writes a kernel with one lane per 64- or 32-bit element of ymm (4
// or 8 lanes; or of xmm, 2 or 4 lanes, with AVX only). There are sixteen
// registers and no rotate or three-input logic: the state a..h takes
// registers 0-7, the message window lives in a 16-entry ring on the
// stack, rotations are two shifts and an xor (a byte shuffle for
// SHA-512's rotation by 8), and Maj reuses the a^b of the previous round
// (its b^c).
//
// Registers: 0-7 state, 8-10 round temporaries, 11/12 this and the last
// round's a^b, 13-15 schedule temporaries. Constants (K, folded padding,
// the shuffle) are replicated per lane in one table (32 bytes an entry;
// the xmm kernels read the first 16).
type avx2 struct {
	g    *gen
	s    *spec
	pool *pool
	// xmm writes the same kernel on xmm registers (2 or 4 lanes), which
	// needs only AVX: for the CPUs that have AVX but not AVX2.
	xmm bool
}

// reg names vector register i at the kernel's width.
func (a *avx2) reg(i int) string {
	if a.xmm {
		return fmt.Sprintf("X%d", i)
	}
	return fmt.Sprintf("Y%d", i)
}

// vbytes is the width of a register in bytes.
func (a *avx2) vbytes() int {
	if a.xmm {
		return 16
	}
	return 32
}

func (a *avx2) sfx() string {
	if a.s.bits == 64 {
		return "Q"
	}
	return "D"
}

func (a *avx2) lanes() int { return 8 * a.vbytes() / a.s.bits }

// wslot is the stack operand of ring entry t%16.
func (a *avx2) wslot(t int) string { return fmt.Sprintf("%d(SP)", a.vbytes()*(t%16)) }

func (a *avx2) op(mn, src2, src1, dst string) { a.g.l("%s %s, %s, %s", mn, src2, src1, dst) }

func (a *avx2) add(src2, src1, dst string) { a.op("VPADD"+a.sfx(), src2, src1, dst) }

func (a *avx2) xor(src2, src1, dst string) { a.op("VPXOR", src2, src1, dst) }

// rotr xors rotr(x, n) into dst (or sets it, if set) using tmp.
func (a *avx2) rotr(x string, n int, dst, tmp string, set bool) {
	g := a.g
	if a.s.bits == 64 && n == 8 {
		if set {
			g.l("VPSHUFB %s, %s, %s", rot8Mask, x, dst)
			return
		}
		g.l("VPSHUFB %s, %s, %s", rot8Mask, x, tmp)
		a.xor(tmp, dst, dst)
		return
	}
	if set {
		g.l("VPSRL%s $%d, %s, %s", a.sfx(), n, x, dst)
	} else {
		g.l("VPSRL%s $%d, %s, %s", a.sfx(), n, x, tmp)
		a.xor(tmp, dst, dst)
	}
	g.l("VPSLL%s $%d, %s, %s", a.sfx(), a.s.bits-n, x, tmp)
	a.xor(tmp, dst, dst)
}

// rot8Mask is the VPSHUFB operand that rotates each 64-bit lane right
// by 8 bits: byte i of a lane takes byte i+1 (mod 8).
const rot8Mask = "rot8<>(SB)"

func emitRot8(g *gen) {
	for q := 0; q < 4; q++ {
		var v uint64
		for i := 0; i < 8; i++ {
			v |= uint64(8*(q%2)+(i+1)%8) << (8 * i)
		}
		g.l("DATA rot8<>+%d(SB)/8, $0x%016x", 8*q, v)
	}
	g.l("GLOBL rot8<>(SB), RODATA|NOPTR, $32")
	g.l("")
}

// sigma sets dst to rotr(x,r0) ^ rotr(x,r1) ^ (shr or rotr)(x,r2).
func (a *avx2) sigma(x string, r [3]int, shift bool, dst, tmp string) {
	a.rotr(x, r[0], dst, tmp, true)
	a.rotr(x, r[1], dst, tmp, false)
	if shift {
		a.g.l("VPSRL%s $%d, %s, %s", a.sfx(), r[2], x, tmp)
		a.xor(tmp, dst, dst)
	} else {
		a.rotr(x, r[2], dst, tmp, false)
	}
}

// round writes round t; ab and bc are this round's a^b destination and
// the previous round's (which is this round's b^c).
func (a *avx2) round(t int, st [8]string, w word, ab, bc string) {
	s := a.s
	A, B, D, E, F, G, H := st[0], st[1], st[3], st[4], st[5], st[6], st[7] // c enters as bc
	t0, t1, t2 := a.reg(8), a.reg(9), a.reg(10)
	if w.isConst {
		a.add(a.pool.sym((s.k[t]+w.val)&s.mask()), H, H)
	} else {
		a.add(a.wslot(t), H, H)
		a.add(a.pool.sym(s.k[t]), H, H)
	}
	a.sigma(E, s.bigSigma1, false, t0, t1)
	// Ch = ((f ^ g) & e) ^ g
	a.xor(G, F, t2)
	a.op("VPAND", E, t2, t2)
	a.xor(G, t2, t2)
	a.add(t2, t0, t0)
	a.add(t0, H, H)
	a.add(H, D, D)
	a.sigma(A, s.bigSigma0, false, t0, t1)
	// Maj = b ^ ((a ^ b) & (b ^ c))
	a.xor(B, A, ab)
	a.op("VPAND", ab, bc, t2)
	a.xor(B, t2, t2)
	a.add(t2, t0, t0)
	a.add(t0, H, H)
}

// scheduleWord writes W[t] (t >= 16) to its ring entry.
func (a *avx2) scheduleWord(t int, w word) {
	s := a.s
	x, s0, acc := a.reg(13), a.reg(14), a.reg(15)
	have := false
	addTo := func(src string) {
		if !have {
			a.g.l("VMOVDQU %s, %s", src, acc)
			have = true
			return
		}
		a.add(src, acc, acc)
	}
	for _, tm := range w.terms {
		switch tm.sigma {
		case 0, 1:
			r := s.smallSigma0
			if tm.sigma == 1 {
				r = s.smallSigma1
			}
			a.g.l("VMOVDQU %s, %s", a.wslot(tm.src), x)
			a.sigma(x, r, true, s0, a.reg(10))
			addTo(s0)
		}
	}
	for _, tm := range w.terms {
		if tm.sigma < 0 {
			addTo(a.wslot(tm.src))
		}
	}
	if w.c != 0 {
		a.add(a.pool.sym(w.c), acc, acc)
	}
	a.g.l("VMOVDQU %s, %s", acc, a.wslot(t))
}

func (a *avx2) kernel(name string) {
	g, s := a.g, a.s
	rowLoad := func(off int, base, dst string) { g.l("VMOVDQU %d(%s), %s", off, base, dst) }
	g.l("// func %s(s *State, lane, n int)", name)
	g.l("TEXT ·%s(SB), $%d-24", name, 16*a.vbytes())
	g.l("MOVQ s+0(FP), AX")
	g.l("MOVQ lane+8(FP), BX")
	g.l("LEAQ (AX)(BX*%d), AX", s.bits/8)
	g.l("MOVQ n+16(FP), CX")
	for j := 0; j < 8; j++ {
		rowLoad(rowOff(secU, j), "AX", a.reg(8))
		g.l("VMOVDQU %s, %s", a.reg(8), a.wslot(j))
	}
	g.l("iter:")
	g.l("MOVQ AX, SI")
	g.l("MOVL $2, DX")
	g.l("pass:")
	for j := 0; j < 8; j++ {
		rowLoad(j*rowBytes, "SI", a.reg(j))
	}
	sched := s.schedule()
	st := [8]string{}
	for j := range st {
		st[j] = a.reg(j)
	}
	ab, bc := a.reg(11), a.reg(12)
	a.xor(st[2], st[1], bc) // b ^ c before round 0
	for t := 0; t < s.rounds; t++ {
		a.round(t, st, sched[t], ab, bc)
		ab, bc = bc, ab
		st = [8]string{st[7], st[0], st[1], st[2], st[3], st[4], st[5], st[6]}
		if t+16 < s.rounds {
			a.scheduleWord(t+16, sched[t+16])
		}
	}
	for j := 0; j < 8; j++ {
		a.add(fmt.Sprintf("%d(SI)", j*rowBytes), a.reg(j), a.reg(j))
		g.l("VMOVDQU %s, %s", a.reg(j), a.wslot(j))
	}
	g.l("ADDQ $%d, SI", secBytes)
	g.l("DECL DX")
	g.l("JNZ pass")
	for j := 0; j < 8; j++ {
		off := rowOff(secAcc, j)
		a.xor(fmt.Sprintf("%d(AX)", off), a.reg(j), a.reg(8))
		g.l("VMOVDQU %s, %d(AX)", a.reg(8), off)
	}
	g.l("DECQ CX")
	g.l("JNZ iter")
	for j := 0; j < 8; j++ {
		g.l("VMOVDQU %s, %d(AX)", a.reg(j), rowOff(secU, j))
	}
	g.comment("leave no key material on the stack or in the vector registers")
	g.l("VZEROALL")
	for i := 0; i < 16; i++ {
		g.l("VMOVDQU %s, %s", a.reg(0), a.wslot(i))
	}
	g.l("RET")
	g.l("")
}
