// Command neongen writes aes_neon_arm.s (ARMv7 NEON) and aes_neon_arm64.s
// (arm64 Advanced SIMD without the cryptography extension): the package's
// bitsliced, fixsliced AES (bitslice_*.go) on eight blocks at once, with
// no table lookups and no secret-dependent branches or addresses.
//
// Each 128-bit register holds two 64-bit planes of the portable layout:
// its low lane is plane i of blocks 0-3, its high lane plane i of blocks
// 4-7, and every step of the portable code (the swap-moves of
// bitslice_layout.go, the Boyar-Peralta S-box, the fixsliced MixColumns of
// bitslice_round.go) is done on both lanes at once with the lane-wise
// shifts, VTRN/TRN1/TRN2 for the swap-moves by whole bytes, and REV16 /
// REV64 for the byte and word rotations. So the kernel computes exactly
// what the portable code computes, eight blocks per pass, using its round
// keys (Cipher.bsEnc / bsDec) as they are.
//
// The program is built and register-allocated by ciphers/internal/armneon, which
// spills to the stack frame on ARMv7 (16 registers) and prints every vector
// instruction as a WORD with its GNU mnemonic; ciphers/internal/armneon's tests
// assemble those mnemonics with binutils and compare the words.
//
// Run it with "go generate" in ciphers/aes.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/cryptvol/cryptvol/ciphers/internal/armneon"
)

type V = armneon.V

// Core registers (the same numbers on both architectures): round keys,
// source, destination, tweaks read before and after the rounds, spill
// area, loop count, rounds.
const (
	rKey  = 0
	rSrc  = 1
	rDst  = 2
	rXin  = 3
	rStep = 4 // 16 for XTS tweaks, 0 for ECB (one zero block read again)
	rScr  = 5
	rN    = 6
	rNr   = 7
	rXout = 8
)

type gen struct {
	p   *armneon.Prog
	v7  bool // ARMv7: VTRN and VSWP pair instructions
	key int  // byte offset of the current round key from rKey
}

// swapHalves turns (a, b) into (a.lo:b.lo, a.hi:b.hi).
func (g *gen) swapHalves(a, b V) (V, V) {
	if g.v7 {
		return g.p.SwapHL(a, b)
	}
	return g.p.Trn1(a, b, 64), g.p.Trn2(a, b, 64)
}

var masks = map[int]uint64{
	1: 0x5555555555555555, 2: 0x3333333333333333, 4: 0x0f0f0f0f0f0f0f0f,
}

// exchange is bitslice_layout.go's exchange on both lanes.
func (g *gen) exchange(lo, hi *V, s int) {
	p := g.p
	if s >= 8 {
		if g.v7 {
			*lo, *hi = p.Trn(*lo, *hi, s)
		} else {
			*lo, *hi = p.Trn1(*lo, *hi, s), p.Trn2(*lo, *hi, s)
		}
		return
	}
	t := p.And(p.Eor(p.Shr(*lo, s, 64), *hi), p.Const(masks[s]))
	*hi = p.Eor(*hi, t)
	*lo = p.Eor(*lo, p.Shl(t, s, 64))
}

func (g *gen) bitslice(w *[8]V) {
	for j := 0; j < 8; j += 2 {
		g.exchange(&w[j], &w[j+1], 8)
		g.exchange(&w[j], &w[j+1], 16)
		g.exchange(&w[j], &w[j+1], 32)
		g.exchange(&w[j], &w[j+1], 4)
	}
	for j := 0; j < 4; j++ {
		g.exchange(&w[j], &w[j+4], 2)
	}
	for _, j := range [4]int{0, 1, 4, 5} {
		g.exchange(&w[j], &w[j+2], 1)
	}
}

func (g *gen) unbitslice(w *[8]V) {
	for _, j := range [4]int{0, 1, 4, 5} {
		g.exchange(&w[j], &w[j+2], 1)
	}
	for j := 0; j < 4; j++ {
		g.exchange(&w[j], &w[j+4], 2)
	}
	for j := 0; j < 8; j += 2 {
		g.exchange(&w[j], &w[j+1], 4)
		g.exchange(&w[j], &w[j+1], 32)
		g.exchange(&w[j], &w[j+1], 16)
		g.exchange(&w[j], &w[j+1], 8)
	}
}

var planeWord = [8]int{0, 2, 4, 6, 1, 3, 5, 7}

// load reads eight blocks, each XORed with 16 bytes of the mask stream
// (the XTS tweaks, or zeros), into planes.
func (g *gen) load() [8]V {
	p := g.p
	var b [8]V
	for i := range b {
		b[i] = p.Eor(p.Load(rSrc), p.LoadStep(rXin, rStep))
	}
	var w [8]V
	for i := 0; i < 4; i++ {
		w[2*i], w[2*i+1] = g.swapHalves(b[i], b[i+4])
	}
	g.bitslice(&w)
	var q [8]V
	for i := range q {
		q[i] = w[planeWord[i]]
	}
	return q
}

func (g *gen) store(q [8]V) {
	p := g.p
	var w [8]V
	for i := range q {
		w[planeWord[i]] = q[i]
	}
	g.unbitslice(&w)
	var b [8]V
	for i := 0; i < 4; i++ {
		b[i], b[i+4] = g.swapHalves(w[2*i], w[2*i+1])
	}
	for i := range b {
		p.Store(p.Eor(b[i], p.LoadStep(rXout, rStep)), rDst)
	}
}

func (g *gen) roundKey(r, i int) V { return g.p.LoadDup64(rKey, 64*r+8*i) }

func (g *gen) addRoundKey(q *[8]V, r int) {
	for i := range q {
		q[i] = g.p.Eor(q[i], g.roundKey(r, i))
	}
}

// subBytes is bitslice_sbox.go's Boyar-Peralta circuit.
func (g *gen) subBytes(q *[8]V) {
	p := g.p
	x := func(a, b V) V { return p.Eor(a, b) }
	a := func(a, b V) V { return p.And(a, b) }
	x0, x1, x2, x3 := q[7], q[6], q[5], q[4]
	x4, x5, x6, x7 := q[3], q[2], q[1], q[0]

	y14 := x(x3, x5)
	y13 := x(x0, x6)
	y9 := x(x0, x3)
	y8 := x(x0, x5)
	t0 := x(x1, x2)
	y1 := x(t0, x7)
	y4 := x(y1, x3)
	y12 := x(y13, y14)
	y2 := x(y1, x0)
	y5 := x(y1, x6)
	y3 := x(y5, y8)
	t1 := x(x4, y12)
	y15 := x(t1, x5)
	y20 := x(t1, x1)
	y6 := x(y15, x7)
	y10 := x(y15, t0)
	y11 := x(y20, y9)
	y7 := x(x7, y11)
	y17 := x(y10, y11)
	y19 := x(y10, y8)
	y16 := x(t0, y11)
	y21 := x(y13, y16)
	y18 := x(x0, y16)

	t2 := a(y12, y15)
	t3 := a(y3, y6)
	t4 := x(t3, t2)
	t5 := a(y4, x7)
	t6 := x(t5, t2)
	t7 := a(y13, y16)
	t8 := a(y5, y1)
	t9 := x(t8, t7)
	t10 := a(y2, y7)
	t11 := x(t10, t7)
	t12 := a(y9, y11)
	t13 := a(y14, y17)
	t14 := x(t13, t12)
	t15 := a(y8, y10)
	t16 := x(t15, t12)
	t17 := x(t4, t14)
	t18 := x(t6, t16)
	t19 := x(t9, t14)
	t20 := x(t11, t16)
	t21 := x(t17, y20)
	t22 := x(t18, y19)
	t23 := x(t19, y21)
	t24 := x(t20, y18)

	t25 := x(t21, t22)
	t26 := a(t21, t23)
	t27 := x(t24, t26)
	t28 := a(t25, t27)
	t29 := x(t28, t22)
	t30 := x(t23, t24)
	t31 := x(t22, t26)
	t32 := a(t31, t30)
	t33 := x(t32, t24)
	t34 := x(t23, t33)
	t35 := x(t27, t33)
	t36 := a(t24, t35)
	t37 := x(t36, t34)
	t38 := x(t27, t36)
	t39 := a(t29, t38)
	t40 := x(t25, t39)

	t41 := x(t40, t37)
	t42 := x(t29, t33)
	t43 := x(t29, t40)
	t44 := x(t33, t37)
	t45 := x(t42, t41)
	z0 := a(t44, y15)
	z1 := a(t37, y6)
	z2 := a(t33, x7)
	z3 := a(t43, y16)
	z4 := a(t40, y1)
	z5 := a(t29, y7)
	z6 := a(t42, y11)
	z7 := a(t45, y17)
	z8 := a(t41, y10)
	z9 := a(t44, y12)
	z10 := a(t37, y3)
	z11 := a(t33, y4)
	z12 := a(t43, y13)
	z13 := a(t40, y5)
	z14 := a(t29, y2)
	z15 := a(t42, y9)
	z16 := a(t45, y14)
	z17 := a(t41, y8)

	t46 := x(z15, z16)
	t47 := x(z10, z11)
	t48 := x(z5, z13)
	t49 := x(z9, z10)
	t50 := x(z2, z12)
	t51 := x(z2, z5)
	t52 := x(z7, z8)
	t53 := x(z0, z3)
	t54 := x(z6, z7)
	t55 := x(z16, z17)
	t56 := x(z12, t48)
	t57 := x(t50, t53)
	t58 := x(z4, t46)
	t59 := x(z3, t54)
	t60 := x(t46, t57)
	t61 := x(z14, t57)
	t62 := x(t52, t58)
	t63 := x(t49, t58)
	t64 := x(z4, t59)
	t65 := x(t61, t62)
	t66 := x(z1, t63)
	s0 := x(t59, t63)
	s6 := p.Not(x(t56, t62))
	s7 := p.Not(x(t48, t60))
	t67 := x(t64, t65)
	s3 := x(t53, t66)
	s4 := x(t51, t66)
	s5 := x(t47, t65)
	s1 := p.Not(x(t64, s3))
	s2 := p.Not(x(t55, t67))

	q[7], q[6], q[5], q[4] = s0, s1, s2, s3
	q[3], q[2], q[1], q[0] = s4, s5, s6, s7
}

func (g *gen) invAffine(q *[8]V) {
	p := g.p
	q0, q1, q2, q3, q4, q5, q6, q7 := q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]
	q[0] = p.Not(p.Xor3(q2, q5, q7))
	q[1] = p.Xor3(q3, q6, q0)
	q[2] = p.Not(p.Xor3(q4, q7, q1))
	q[3] = p.Xor3(q5, q0, q2)
	q[4] = p.Xor3(q6, q1, q3)
	q[5] = p.Xor3(q7, q2, q4)
	q[6] = p.Xor3(q0, q3, q5)
	q[7] = p.Xor3(q1, q4, q6)
}

func (g *gen) invSubBytes(q *[8]V) {
	g.invAffine(q)
	g.subBytes(q)
	g.invAffine(q)
}

// The rotations of bitslice_round.go on both 64-bit lanes.
func (g *gen) rotRow(x V) V  { return g.p.Sli(g.p.Shr(x, 16, 64), x, 48, 64) } // right by 16
func (g *gen) rotRow2(x V) V { return g.p.Rev64(x) }
func (g *gen) colRot(x V, m int) V {
	switch m {
	case 1:
		return g.p.Sli(g.p.Shr(x, 4, 16), x, 12, 16)
	case 2:
		return g.p.Rev16(x)
	case 3:
		return g.p.Sli(g.p.Shr(x, 12, 16), x, 4, 16)
	}
	return x
}

// mixColumns is mixColumnsAt(q, k, rk[r]); r < 0 means no round key.
// Output plane i needs t[i-1] (t[7] for plane 0, and t[7] again for
// planes 1, 3 and 4), r[i] and u[i], so the planes are computed in that
// order, t[7] first, to keep few values live on ARMv7's 16 registers.
func (g *gen) mixColumns(q *[8]V, k, r int) {
	p := g.p
	var rr, t, u [8]V
	step := func(i int) {
		rr[i] = g.colRot(g.rotRow(q[i]), k)
		t[i] = p.Eor(q[i], rr[i])
		if k&1 == 0 {
			u[i] = g.rotRow2(t[i])
		} else {
			u[i] = g.colRot(g.rotRow2(t[i]), 2)
		}
	}
	key := func(i int, v V) V {
		if r < 0 {
			return v
		}
		return p.Eor(v, g.roundKey(r, i))
	}
	step(7)
	var out [8]V
	for i := 0; i < 8; i++ {
		if i < 7 {
			step(i)
		}
		prev := t[(i+7)%8]
		v := p.Xor3(prev, rr[i], u[i])
		if i == 1 || i == 3 || i == 4 {
			v = p.Eor(v, t[7])
		}
		out[i] = key(i, v)
	}
	*q = out
}

func (g *gen) invMixColumns(q *[8]V, k, r int) {
	p := g.p
	g.addRoundKey(q, r)
	var v [8]V
	for i := range q {
		if k&1 == 0 {
			v[i] = p.Eor(q[i], g.rotRow2(q[i]))
		} else {
			v[i] = p.Eor(q[i], g.colRot(g.rotRow2(q[i]), 2))
		}
	}
	q[0] = p.Eor(q[0], v[6])
	q[1] = p.Xor3(q[1], v[6], v[7])
	q[2] = p.Xor3(q[2], v[0], v[7])
	q[3] = p.Xor3(q[3], v[1], v[6])
	q[4] = p.Eor(p.Xor3(q[4], v[2], v[6]), v[7])
	q[5] = p.Xor3(q[5], v[3], v[7])
	q[6] = p.Eor(q[6], v[4])
	q[7] = p.Eor(q[7], v[5])
	g.mixColumns(q, k, -1)
}

// shiftRows2 is ShiftRows twice: rows 1 and 3 (bits 16-31 and 48-63 of
// each lane) rotate by two columns, a byte swap in their 16-bit fields.
func (g *gen) shiftRows2(q *[8]V) {
	m := g.p.Const(0xffff0000ffff0000)
	for i := range q {
		q[i] = g.p.Bit(q[i], g.p.Rev16(q[i]), m)
	}
}

func (g *gen) finalShift(q *[8]V, k int) {
	switch k {
	case 0:
	case 2:
		g.shiftRows2(q)
	default:
		panic("no AES key size leaves an odd column offset")
	}
}

func body(v7 bool, nr int, decrypt bool) *armneon.Prog {
	g := &gen{p: &armneon.Prog{}, v7: v7}
	q := g.load()
	if !decrypt {
		g.addRoundKey(&q, 0)
		for r := 1; r < nr; r++ {
			g.subBytes(&q)
			g.mixColumns(&q, r&3, r)
		}
		g.subBytes(&q)
		g.addRoundKey(&q, nr)
		g.finalShift(&q, nr&3)
	} else {
		g.addRoundKey(&q, nr)
		for r := nr - 1; r > 0; r-- {
			g.invSubBytes(&q)
			g.invMixColumns(&q, (r-nr)&3, r)
		}
		g.invSubBytes(&q)
		g.addRoundKey(&q, 0)
		g.finalShift(&q, (-nr)&3)
	}
	g.store(q)
	return g.p
}

type arch struct {
	name, goarch string
	v7           bool
	target       armneon.Target
	ptr          int // pointer size
	mov          string
}

var arches = []arch{
	{"arm", "arm", true, armneon.ARM{TmpReg: 12}, 4, "MOVW"},
	{"arm64", "arm64", false, armneon.ARM64{}, 8, "MOVD"},
}

func main() {
	for _, a := range arches {
		var b strings.Builder
		fmt.Fprintf(&b, "// Code generated by neongen; DO NOT EDIT.\n\n//go:build %s && !purego\n\n#include \"textflag.h\"\n", a.goarch)
		for _, decrypt := range []bool{false, true} {
			function(&b, a, decrypt)
		}
		file := "aes_neon_" + a.name + ".s"
		if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// function writes one kernel: it picks the unrolled loop for nr rounds.
//
//	func NAME(nr int, rk *state, dst, src, x *byte, xstep, n int)
//
// processes n runs of 8 blocks; block i is XORed before and after the
// rounds with the 16 bytes at x+i*xstep: XTS passes its tweaks and 16, ECB
// a zero block and 0.
func function(b *strings.Builder, a arch, decrypt bool) {
	name := "encryptNEON"
	if decrypt {
		name = "decryptNEON"
	}
	type variant struct {
		nr    int
		lines []string
		slots int
		st    armneon.Stats
	}
	var vs []variant
	maxSlots := 0
	for _, nr := range []int{10, 12, 14} {
		lines, slots, st := body(a.v7, nr, decrypt).Allocate(a.target, rScr)
		vs = append(vs, variant{nr, lines, slots, st})
		maxSlots = max(maxSlots, slots)
		fmt.Fprintf(os.Stderr, "%s %s nr=%d: %d operations, %d spills, %d reloads, %d rematerialized, %d moves, %d slots\n",
			a.name, name, nr, st.Insts, st.Spills, st.Reloads, st.Remats, st.Moves, slots)
	}
	args := []string{"nr", "rk", "dst", "src", "x", "xstep", "n"}
	fmt.Fprintf(b, "\n// func %s(nr int, rk *state, dst, src, x *byte, xstep, n int)\n", name)
	if maxSlots > 0 {
		fmt.Fprintf(b, "// The frame holds %d spill slots; they are zeroed before returning.\n", maxSlots)
	}
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $%d-%d\n", name, 16*maxSlots, a.ptr*len(args))
	regs := map[string]int{"nr": rNr, "rk": rKey, "dst": rDst, "src": rSrc, "x": rXin, "xstep": rStep, "n": rN}
	for i, arg := range args {
		fmt.Fprintf(b, "\t%s %s+%d(FP), R%d\n", a.mov, arg, a.ptr*i, regs[arg])
	}
	fmt.Fprintf(b, "\t%s R%d, R%d\n", a.mov, rXin, rXout)
	if maxSlots > 0 {
		if a.v7 {
			fmt.Fprintf(b, "\tADD $4, R13, R%d\n", rScr) // 0(R13) is the saved LR
		} else {
			fmt.Fprintf(b, "\tADD $8, RSP, R%d\n", rScr)
		}
	}
	for _, v := range vs[:2] {
		fmt.Fprintf(b, "\tCMP $%d, R%d\n\tBEQ %s_%d\n", v.nr, rNr, name, v.nr)
	}
	fmt.Fprintf(b, "\tB %s_14\n", name)
	for _, v := range vs {
		fmt.Fprintf(b, "%s_%d:\n", name, v.nr)
		for _, l := range v.lines {
			b.WriteString("\t" + l + "\n")
		}
		if a.v7 {
			fmt.Fprintf(b, "\tSUB.S $1, R%d\n\tBNE %s_%d\n\tB %s_done\n", rN, name, v.nr, name)
		} else {
			fmt.Fprintf(b, "\tSUBS $1, R%d\n\tBNE %s_%d\n\tB %s_done\n", rN, name, v.nr, name)
		}
	}
	fmt.Fprintf(b, "%s_done:\n", name)
	if maxSlots > 0 {
		zero := armneon.Inst{Kind: armneon.Const, Dst: []V{0}, C: 0}
		for _, l := range a.target.Encode(zero) {
			b.WriteString("\t" + l + "\n")
		}
		for s := 0; s < maxSlots; s++ {
			for _, l := range a.target.Spill(0, rScr, 16*s) {
				b.WriteString("\t" + l + "\n")
			}
		}
	}
	b.WriteString("\tRET\n")
}
