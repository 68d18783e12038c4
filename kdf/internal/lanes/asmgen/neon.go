package main

import "fmt"

// neon writes an arm64 kernel with one lane per 64- or 32-bit element of
// a 128-bit register (2 or 4 lanes). Like AVX-512 it has 32 registers,
// so the layout is the same: V0-V7 the state a..h, V8-V23 the schedule
// window (W[t] in V(8+t%16)), V24-V27 round and V28-V31 schedule
// temporaries. There is no rotate: a rotation is a shift left and a
// shift right and insert (SHL, SRI); Ch and Maj are one bit select (BSL)
// each after a copy or an xor.
//
// R0 points at the group's first lane in the State, R4 at the keyed state
// of the current compression, R3 at the constants (one word replicated
// per lane, 16 bytes an entry), R1 counts iterations and R2 the two
// compressions of one.
type neon struct {
	g    *gen
	s    *spec
	pool *pool
}

func v(i int) string { return fmt.Sprintf("V%d", i) }

func (a *neon) arr() string {
	if a.s.bits == 64 {
		return "D2"
	}
	return "S4"
}

func (a *neon) add(src2, src1, dst string) {
	a.g.l("VADD %s.%s, %s.%s, %s.%s", src2, a.arr(), src1, a.arr(), dst, a.arr())
}

func (a *neon) eor(src2, src1, dst string) { a.g.l("VEOR %s.B16, %s.B16, %s.B16", src2, src1, dst) }

// rotr sets dst to rotr(x, n).
func (a *neon) rotr(x string, n int, dst string) {
	a.g.l("VSHL $%d, %s.%s, %s.%s", a.s.bits-n, x, a.arr(), dst, a.arr())
	a.g.l("VSRI $%d, %s.%s, %s.%s", n, x, a.arr(), dst, a.arr())
}

// sigma sets dst to rotr(x,r0) ^ rotr(x,r1) ^ (shr or rotr)(x,r2).
func (a *neon) sigma(x string, r [3]int, shift bool, dst, tmp string) {
	a.rotr(x, r[0], dst)
	a.rotr(x, r[1], tmp)
	a.eor(tmp, dst, dst)
	if shift {
		a.g.l("VUSHR $%d, %s.%s, %s.%s", r[2], x, a.arr(), tmp, a.arr())
	} else {
		a.rotr(x, r[2], tmp)
	}
	a.eor(tmp, dst, dst)
}

// addConst adds the constant c to dst (via tmp).
func (a *neon) addConst(c uint64, dst, tmp string) {
	a.g.l("FMOVQ %d(R3), F%s", a.pool.ref(c), tmp[1:])
	a.add(tmp, dst, dst)
}

func (a *neon) round(t int, st [8]string, w word) {
	s := a.s
	A, B, C, D, E, F, G, H := st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7]
	t0, t1, t2, t3 := v(24), v(25), v(26), v(27)
	if w.isConst {
		a.addConst((s.k[t]+w.val)&s.mask(), H, t3)
	} else {
		a.add(v(8+t%16), H, H)
		a.addConst(s.k[t], H, t3)
	}
	a.sigma(E, s.bigSigma1, false, t0, t1)
	a.g.l("VMOV %s.B16, %s.B16", E, t2)
	a.g.l("VBSL %s.B16, %s.B16, %s.B16", G, F, t2) // Ch: e ? f : g
	a.add(t2, t0, t0)
	a.add(t0, H, H)
	a.add(H, D, D)
	a.sigma(A, s.bigSigma0, false, t0, t1)
	a.eor(B, A, t2)
	a.g.l("VBSL %s.B16, %s.B16, %s.B16", B, C, t2) // Maj: a^b ? c : b
	a.add(t2, t0, t0)
	a.add(t0, H, H)
}

func (a *neon) scheduleWord(t int, w word) {
	s := a.s
	dst := v(8 + t%16)
	x0, x1, x2, x3 := v(28), v(29), v(30), v(31)
	var addends []string
	for _, tm := range w.terms {
		src := v(8 + tm.src%16)
		switch tm.sigma {
		case 0:
			a.sigma(src, s.smallSigma0, true, x0, x1)
			addends = append(addends, x0)
		case 1:
			a.sigma(src, s.smallSigma1, true, x3, x1)
			addends = append(addends, x3)
		default:
			addends = append(addends, src)
		}
	}
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
		a.g.l("VMOV %s.B16, %s.B16", acc, dst)
	}
	if w.c != 0 {
		a.addConst(w.c, dst, x2)
	}
}

func (a *neon) kernel(name string) {
	g, s := a.g, a.s
	q := func(r string) string { return "F" + r[1:] } // FMOVQ names the same register F
	g.l("// func %s(s *State, lane, n int)", name)
	g.l("TEXT ·%s(SB), NOSPLIT, $0-24", name)
	g.l("MOVD s+0(FP), R0")
	g.l("MOVD lane+8(FP), R1")
	shift := 3
	if s.bits == 32 {
		shift = 2
	}
	g.l("ADD R1<<%d, R0, R0", shift)
	g.l("MOVD n+16(FP), R1")
	g.l("MOVD $%s<>(SB), R3", a.pool.name)
	for j := 0; j < 8; j++ {
		g.l("FMOVQ %d(R0), %s", rowOff(secU, j), q(v(8+j)))
	}
	g.l("iter:")
	g.l("MOVD R0, R4")
	g.l("MOVD $2, R2")
	g.l("pass:")
	for j := 0; j < 8; j++ {
		g.l("FMOVQ %d(R4), %s", j*rowBytes, q(v(j)))
	}
	sched := s.schedule()
	st := [8]string{}
	for j := range st {
		st[j] = v(j)
	}
	for t := 0; t < s.rounds; t++ {
		a.round(t, st, sched[t])
		st = [8]string{st[7], st[0], st[1], st[2], st[3], st[4], st[5], st[6]}
		if t+16 < s.rounds {
			a.scheduleWord(t+16, sched[t+16])
		}
	}
	for j := 0; j < 8; j++ {
		g.l("FMOVQ %d(R4), F24", j*rowBytes)
		a.add(v(24), v(j), v(j))
		g.l("VMOV %s.B16, %s.B16", v(j), v(8+j))
	}
	g.l("ADD $%d, R4, R4", secBytes)
	g.l("SUBS $1, R2, R2")
	g.l("BNE pass")
	for j := 0; j < 8; j++ {
		off := rowOff(secAcc, j)
		g.l("FMOVQ %d(R0), F24", off)
		a.eor(v(8+j), v(24), v(24))
		g.l("FMOVQ F24, %d(R0)", off)
	}
	g.l("SUBS $1, R1, R1")
	g.l("BNE iter")
	for j := 0; j < 8; j++ {
		g.l("FMOVQ %s, %d(R0)", q(v(8+j)), rowOff(secU, j))
	}
	g.comment("leave no key material in the vector registers")
	for i := 0; i < 32; i++ {
		a.eor(v(i), v(i), v(i))
	}
	g.l("RET")
	g.l("")
}
