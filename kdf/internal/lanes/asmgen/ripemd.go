package main

import "fmt"

// RIPEMD-160 (Dobbertin, Bosselaers, Preneel 1996, section 3 and
// appendix A; the tables are those of hashes/ripemd160/gen_block.go): two
// lines of 80 steps over 32-bit little-endian words, each step
// A = rol_s(A + f(B,C,D) + X[r] + K) + E, C = rol_10(C), then the names
// shift. In PBKDF2 the message of both compressions is the 20-byte digest
// (X[0..4]), 0x80 (X[5]), zeros and the bit length (64+20)*8 (X[14]).
var (
	ripemdRL = [80]int{
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
		7, 4, 13, 1, 10, 6, 15, 3, 12, 0, 9, 5, 2, 14, 11, 8,
		3, 10, 14, 4, 9, 15, 8, 1, 2, 7, 0, 6, 13, 11, 5, 12,
		1, 9, 11, 10, 0, 8, 12, 4, 13, 3, 7, 15, 14, 5, 6, 2,
		4, 0, 5, 9, 7, 12, 2, 10, 14, 1, 3, 8, 11, 6, 15, 13}
	ripemdRR = [80]int{
		5, 14, 7, 0, 9, 2, 11, 4, 13, 6, 15, 8, 1, 10, 3, 12,
		6, 11, 3, 7, 0, 13, 5, 10, 14, 15, 8, 12, 4, 9, 1, 2,
		15, 5, 1, 3, 7, 14, 6, 9, 11, 8, 12, 2, 10, 0, 4, 13,
		8, 6, 4, 1, 3, 11, 15, 0, 5, 12, 2, 13, 9, 7, 10, 14,
		12, 15, 10, 4, 1, 5, 8, 7, 6, 2, 13, 14, 0, 3, 9, 11}
	ripemdSL = [80]int{
		11, 14, 15, 12, 5, 8, 7, 9, 11, 13, 14, 15, 6, 7, 9, 8,
		7, 6, 8, 13, 11, 9, 7, 15, 7, 12, 15, 9, 11, 7, 13, 12,
		11, 13, 6, 7, 14, 9, 13, 15, 14, 8, 13, 6, 5, 12, 7, 5,
		11, 12, 14, 15, 14, 15, 9, 8, 9, 14, 5, 6, 8, 6, 5, 12,
		9, 15, 5, 11, 6, 8, 13, 12, 5, 12, 13, 14, 11, 8, 5, 6}
	ripemdSR = [80]int{
		8, 9, 9, 11, 13, 15, 15, 5, 7, 7, 8, 11, 14, 14, 12, 6,
		9, 13, 15, 7, 12, 8, 9, 11, 7, 7, 12, 7, 6, 15, 13, 11,
		9, 7, 15, 11, 8, 6, 6, 14, 12, 13, 5, 14, 13, 13, 7, 5,
		15, 5, 8, 11, 14, 14, 6, 14, 6, 9, 12, 9, 12, 5, 15, 8,
		8, 5, 12, 9, 12, 5, 14, 6, 8, 13, 6, 5, 15, 13, 11, 11}
	ripemdKL = [5]uint64{0x00000000, 0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xa953fd4e}
	ripemdKR = [5]uint64{0x50a28be6, 0x5c4dd124, 0x6d703ef3, 0x7a6d76e9, 0x00000000}
	// ripemdX is the message: -1 for the digest words, else the constant.
	ripemdX = [16]int64{-1, -1, -1, -1, -1, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, (64 + 20) * 8, 0}
)

// ripemdF evaluates boolean function i (1..5) on bits.
func ripemdF(i int, x, y, z bool) bool {
	switch i {
	case 1:
		return x != y != z
	case 2:
		return x && y || !x && z
	case 3:
		return (x || !y) != z
	case 4:
		return x && z || y && !z
	}
	return x != (y || !z)
}

// ripemdTern is VPTERNLOG's truth table of function i with x in the
// destination, y and z the other operands.
func ripemdTern(i int) int {
	imm := 0
	for idx := 0; idx < 8; idx++ {
		if ripemdF(i, idx&4 != 0, idx&2 != 0, idx&1 != 0) {
			imm |= 1 << idx
		}
	}
	return imm
}

// ripemdStep describes step j of one line: the function, the message
// word, the rotation and the constant.
type ripemdStep struct {
	f, r, s int
	k       uint64
}

func ripemdSteps(j int) (left, right ripemdStep) {
	rd := j / 16
	return ripemdStep{rd + 1, ripemdRL[j], ripemdSL[j], ripemdKL[rd]},
		ripemdStep{5 - rd, ripemdRR[j], ripemdSR[j], ripemdKR[rd]}
}

// ripemdVec is what an ISA supplies to the common RIPEMD-160 kernel
// writer: state registers of the two lines, the message operands, the
// per-step operations, loads and stores.
type ripemdVec interface {
	reg(i int) string
	// addMsg adds message word r plus k (folding constant words) to a.
	addMsg(a string, r int, k uint64)
	// fn adds f_i(b, c, d) to a.
	fn(i int, a, b, c, d string)
	rol(s int, a string) string // returns the register now holding rol_s(a)
	add(src, dst string)
	// prologue starts the function and the iteration loop, passStart a
	// compression (the lines from the keyed state), passEnd combines the
	// lines into the next message and closes the loops (T ^= U),
	// epilogue stores U and returns.
	prologue(name string)
	passStart()
	passEnd(l, r [5]string)
	epilogue()
}

// ripemdKernel writes the kernel through v.
func ripemdKernel(v ripemdVec, name string) {
	v.prologue(name)
	v.passStart()
	var l, r [5]string
	for j := range 5 {
		l[j], r[j] = v.reg(j), v.reg(5+j)
	}
	step := func(st *[5]string, p ripemdStep) {
		A, B, C, D, E := st[0], st[1], st[2], st[3], st[4]
		v.addMsg(A, p.r, p.k)
		v.fn(p.f, A, B, C, D)
		A = v.rol(p.s, A)
		v.add(E, A)
		C = v.rol(10, C)
		*st = [5]string{E, A, B, C, D}
	}
	for j := 0; j < 80; j++ {
		pl, pr := ripemdSteps(j)
		step(&l, pl)
		step(&r, pr)
	}
	v.passEnd(l, r)
	v.epilogue()
}

// ---------------------------------------------------------------- AVX-512

// ripemdAVX512: registers 0-4 and 5-9 the two lines, 10-14 the digest
// words of the message, 15-31 temporaries.
type ripemdAVX512 struct {
	g    *gen
	reg_ string // "Z" or "Y"
	pool *pool  // 4-byte broadcast constants
	tmp  int
}

func (a *ripemdAVX512) reg(i int) string { return fmt.Sprintf("%s%d", a.reg_, i) }

func (a *ripemdAVX512) temp() string {
	a.tmp = 15 + (a.tmp-15+1)%17
	return a.reg(a.tmp)
}

func (a *ripemdAVX512) addMsg(A string, r int, k uint64) {
	if ripemdX[r] < 0 {
		a.g.l("VPADDD %s, %s, %s", a.reg(10+r), A, A)
		if k != 0 {
			a.g.l("VPADDD.BCST %s, %s, %s", a.pool.sym(k), A, A)
		}
		return
	}
	if c := (k + uint64(ripemdX[r])) & 0xffffffff; c != 0 {
		a.g.l("VPADDD.BCST %s, %s, %s", a.pool.sym(c), A, A)
	}
}

func (a *ripemdAVX512) fn(i int, A, B, C, D string) {
	t := a.temp()
	a.g.l("VMOVDQA64 %s, %s", B, t)
	a.g.l("VPTERNLOGD $0x%02x, %s, %s, %s", ripemdTern(i), D, C, t)
	a.g.l("VPADDD %s, %s, %s", t, A, A)
}

func (a *ripemdAVX512) rol(s int, x string) string {
	a.g.l("VPROLD $%d, %s, %s", s, x, x)
	return x
}

func (a *ripemdAVX512) add(src, dst string) { a.g.l("VPADDD %s, %s, %s", src, dst, dst) }

func (a *ripemdAVX512) prologue(name string) {
	g := a.g
	a.tmp = 15
	g.l("// func %s(s *State, lane, n int)", name)
	g.l("TEXT ·%s(SB), NOSPLIT, $0-24", name)
	g.l("MOVQ s+0(FP), AX")
	g.l("MOVQ lane+8(FP), BX")
	g.l("LEAQ (AX)(BX*4), AX")
	g.l("MOVQ n+16(FP), CX")
	for j := 0; j < 5; j++ {
		g.l("VMOVDQU64 %d(AX), %s", rowOff(secU, j), a.reg(10+j))
	}
	g.l("iter:")
	g.l("MOVQ AX, SI")
	g.l("MOVL $2, DX")
}

func (a *ripemdAVX512) passStart() {
	g := a.g
	g.l("pass:")
	for j := 0; j < 5; j++ {
		g.l("VMOVDQU64 %d(SI), %s", j*rowBytes, a.reg(j))
		g.l("VMOVDQA64 %s, %s", a.reg(j), a.reg(5+j))
	}
}

// passEnd combines the lines with the chaining value h (at SI) into the
// next message: h'[i] = h[i+1] + L[i+2] + R[i+3] (indices mod 5).
func (a *ripemdAVX512) passEnd(l, r [5]string) {
	g := a.g
	for i := 0; i < 5; i++ {
		dst := a.reg(10 + i)
		g.l("VPADDD %s, %s, %s", r[(i+3)%5], l[(i+2)%5], dst)
		g.l("VPADDD %d(SI), %s, %s", ((i+1)%5)*rowBytes, dst, dst)
	}
	g.l("ADDQ $%d, SI", secBytes)
	g.l("DECL DX")
	g.l("JNZ pass")
	for j := 0; j < 5; j++ {
		off := rowOff(secAcc, j)
		g.l("VPXORD %d(AX), %s, %s", off, a.reg(10+j), a.reg(15))
		g.l("VMOVDQU64 %s, %d(AX)", a.reg(15), off)
	}
	g.l("DECQ CX")
	g.l("JNZ iter")
}

func (a *ripemdAVX512) epilogue() {
	g := a.g
	for j := 0; j < 5; j++ {
		g.l("VMOVDQU64 %s, %d(AX)", a.reg(10+j), rowOff(secU, j))
	}
	g.comment("leave no key material in the vector registers")
	for i := 0; i < 32; i++ {
		g.l("VPXORQ %s, %s, %s", a.reg(i), a.reg(i), a.reg(i))
	}
	g.l("VZEROUPPER")
	g.l("RET")
	g.l("")
}

// ---------------------------------------------------------------- AVX2

// ripemdAVX2: registers 0-4 and 5-9 the two lines, 10-15 temporaries;
// the digest words of the message live on the stack (5 entries), the
// constants (and all-ones, for the NOTs) in a replicated table.
type ripemdAVX2 struct {
	g    *gen
	xmm  bool
	pool *pool // replicated (32 bytes an entry)
	tmp  int
}

func (a *ripemdAVX2) reg(i int) string {
	if a.xmm {
		return fmt.Sprintf("X%d", i)
	}
	return fmt.Sprintf("Y%d", i)
}

func (a *ripemdAVX2) vbytes() int {
	if a.xmm {
		return 16
	}
	return 32
}

func (a *ripemdAVX2) slot(i int) string { return fmt.Sprintf("%d(SP)", a.vbytes()*i) }

func (a *ripemdAVX2) temp() string {
	a.tmp = 10 + (a.tmp-10+1)%6
	return a.reg(a.tmp)
}

func (a *ripemdAVX2) addMsg(A string, r int, k uint64) {
	if ripemdX[r] < 0 {
		a.g.l("VPADDD %s, %s, %s", a.slot(r), A, A)
		if k != 0 {
			a.g.l("VPADDD %s, %s, %s", a.pool.sym(k), A, A)
		}
		return
	}
	if c := (k + uint64(ripemdX[r])) & 0xffffffff; c != 0 {
		a.g.l("VPADDD %s, %s, %s", a.pool.sym(c), A, A)
	}
}

func (a *ripemdAVX2) fn(i int, A, B, C, D string) {
	g, t := a.g, a.temp()
	ones := a.pool.sym(0xffffffff)
	switch i {
	case 1: // b ^ c ^ d
		g.l("VPXOR %s, %s, %s", C, B, t)
		g.l("VPXOR %s, %s, %s", D, t, t)
	case 2: // ((c ^ d) & b) ^ d
		g.l("VPXOR %s, %s, %s", D, C, t)
		g.l("VPAND %s, %s, %s", B, t, t)
		g.l("VPXOR %s, %s, %s", D, t, t)
	case 3: // (b | ^c) ^ d
		g.l("VPXOR %s, %s, %s", ones, C, t)
		g.l("VPOR %s, %s, %s", B, t, t)
		g.l("VPXOR %s, %s, %s", D, t, t)
	case 4: // ((b ^ c) & d) ^ c
		g.l("VPXOR %s, %s, %s", C, B, t)
		g.l("VPAND %s, %s, %s", D, t, t)
		g.l("VPXOR %s, %s, %s", C, t, t)
	default: // b ^ (c | ^d)
		g.l("VPXOR %s, %s, %s", ones, D, t)
		g.l("VPOR %s, %s, %s", C, t, t)
		g.l("VPXOR %s, %s, %s", B, t, t)
	}
	g.l("VPADDD %s, %s, %s", t, A, A)
}

func (a *ripemdAVX2) rol(s int, x string) string {
	t := a.temp()
	a.g.l("VPSLLD $%d, %s, %s", s, x, t)
	a.g.l("VPSRLD $%d, %s, %s", 32-s, x, x)
	a.g.l("VPOR %s, %s, %s", t, x, x)
	return x
}

func (a *ripemdAVX2) add(src, dst string) { a.g.l("VPADDD %s, %s, %s", src, dst, dst) }

func (a *ripemdAVX2) prologue(name string) {
	g := a.g
	a.tmp = 10
	g.l("// func %s(s *State, lane, n int)", name)
	g.l("TEXT ·%s(SB), $%d-24", name, 5*a.vbytes())
	g.l("MOVQ s+0(FP), AX")
	g.l("MOVQ lane+8(FP), BX")
	g.l("LEAQ (AX)(BX*4), AX")
	g.l("MOVQ n+16(FP), CX")
	for j := 0; j < 5; j++ {
		g.l("VMOVDQU %d(AX), %s", rowOff(secU, j), a.reg(10))
		g.l("VMOVDQU %s, %s", a.reg(10), a.slot(j))
	}
	g.l("iter:")
	g.l("MOVQ AX, SI")
	g.l("MOVL $2, DX")
}

func (a *ripemdAVX2) passStart() {
	g := a.g
	g.l("pass:")
	for j := 0; j < 5; j++ {
		g.l("VMOVDQU %d(SI), %s", j*rowBytes, a.reg(j))
		g.l("VMOVDQU %s, %s", a.reg(j), a.reg(5+j))
	}
}

func (a *ripemdAVX2) passEnd(l, r [5]string) {
	g := a.g
	// The five sums need all ten line registers, so they go to the
	// temporaries first (five of six), then to the stack.
	for i := 0; i < 5; i++ {
		dst := a.reg(10 + i)
		g.l("VPADDD %s, %s, %s", r[(i+3)%5], l[(i+2)%5], dst)
		g.l("VPADDD %d(SI), %s, %s", ((i+1)%5)*rowBytes, dst, dst)
	}
	for i := 0; i < 5; i++ {
		g.l("VMOVDQU %s, %s", a.reg(10+i), a.slot(i))
	}
	g.l("ADDQ $%d, SI", secBytes)
	g.l("DECL DX")
	g.l("JNZ pass")
	for j := 0; j < 5; j++ {
		off := rowOff(secAcc, j)
		g.l("VPXOR %d(AX), %s, %s", off, a.reg(10+j), a.reg(15))
		g.l("VMOVDQU %s, %d(AX)", a.reg(15), off)
	}
	g.l("DECQ CX")
	g.l("JNZ iter")
}

func (a *ripemdAVX2) epilogue() {
	g := a.g
	for j := 0; j < 5; j++ {
		g.l("VMOVDQU %s, %d(AX)", a.reg(10+j), rowOff(secU, j))
	}
	g.comment("leave no key material on the stack or in the vector registers")
	g.l("VZEROALL")
	for i := 0; i < 5; i++ {
		g.l("VMOVDQU %s, %s", a.reg(0), a.slot(i))
	}
	g.l("RET")
	g.l("")
}

// ---------------------------------------------------------------- NEON

// ripemdNEON: V0-V4 and V5-V9 the two lines, V10-V14 the digest words,
// V15-V30 temporaries, V31 all ones; R3 points at the constants (16 bytes
// an entry). A rotation is a shift right into a free register and a
// shift left and insert, so the rotated value changes register: the line
// names follow it.
type ripemdNEON struct {
	g    *gen
	pool *pool
	free []string
}

func (a *ripemdNEON) reg(i int) string { return fmt.Sprintf("V%d", i) }

func (a *ripemdNEON) temp() string {
	t := a.free[0]
	a.free = append(a.free[1:], t)
	return t
}

func (a *ripemdNEON) addConst(c uint64, dst string) {
	t := a.temp()
	a.g.l("FMOVQ %d(R3), F%s", a.pool.ref(c), t[1:])
	a.g.l("VADD %s.S4, %s.S4, %s.S4", t, dst, dst)
}

func (a *ripemdNEON) addMsg(A string, r int, k uint64) {
	if ripemdX[r] < 0 {
		a.g.l("VADD %s.S4, %s.S4, %s.S4", a.reg(10+r), A, A)
		if k != 0 {
			a.addConst(k, A)
		}
		return
	}
	if c := (k + uint64(ripemdX[r])) & 0xffffffff; c != 0 {
		a.addConst(c, A)
	}
}

func (a *ripemdNEON) fn(i int, A, B, C, D string) {
	g, t := a.g, a.temp()
	switch i {
	case 1:
		g.l("VEOR %s.B16, %s.B16, %s.B16", C, B, t)
		g.l("VEOR %s.B16, %s.B16, %s.B16", D, t, t)
	case 2: // b ? c : d
		g.l("VMOV %s.B16, %s.B16", B, t)
		g.l("VBSL %s.B16, %s.B16, %s.B16", D, C, t)
	case 3: // (b | ^c) ^ d
		g.l("VEOR V31.B16, %s.B16, %s.B16", C, t)
		g.l("VORR %s.B16, %s.B16, %s.B16", B, t, t)
		g.l("VEOR %s.B16, %s.B16, %s.B16", D, t, t)
	case 4: // d ? b : c
		g.l("VMOV %s.B16, %s.B16", D, t)
		g.l("VBSL %s.B16, %s.B16, %s.B16", C, B, t)
	default: // b ^ (c | ^d)
		g.l("VEOR V31.B16, %s.B16, %s.B16", D, t)
		g.l("VORR %s.B16, %s.B16, %s.B16", C, t, t)
		g.l("VEOR %s.B16, %s.B16, %s.B16", B, t, t)
	}
	g.l("VADD %s.S4, %s.S4, %s.S4", t, A, A)
}

// rol leaves rol_s(x) in a temporary and returns it; x's register
// becomes a temporary.
func (a *ripemdNEON) rol(s int, x string) string {
	t := a.free[0]
	a.free = append(a.free[1:], x)
	a.g.l("VUSHR $%d, %s.S4, %s.S4", 32-s, x, t)
	a.g.l("VSLI $%d, %s.S4, %s.S4", s, x, t)
	return t
}

func (a *ripemdNEON) add(src, dst string) { a.g.l("VADD %s.S4, %s.S4, %s.S4", src, dst, dst) }

func (a *ripemdNEON) prologue(name string) {
	g := a.g
	a.free = nil
	for i := 15; i <= 30; i++ {
		a.free = append(a.free, a.reg(i))
	}
	g.l("// func %s(s *State, lane, n int)", name)
	g.l("TEXT ·%s(SB), NOSPLIT, $0-24", name)
	g.l("MOVD s+0(FP), R0")
	g.l("MOVD lane+8(FP), R1")
	g.l("ADD R1<<2, R0, R0")
	g.l("MOVD n+16(FP), R1")
	g.l("MOVD $%s<>(SB), R3", a.pool.name)
	g.l("FMOVQ %d(R3), F31", a.pool.ref(0xffffffff))
	for j := 0; j < 5; j++ {
		g.l("FMOVQ %d(R0), F%d", rowOff(secU, j), 10+j)
	}
	g.l("iter:")
	g.l("MOVD R0, R4")
	g.l("MOVD $2, R2")
}

func (a *ripemdNEON) passStart() {
	g := a.g
	g.l("pass:")
	for j := 0; j < 5; j++ {
		g.l("FMOVQ %d(R4), F%d", j*rowBytes, j)
		g.l("VMOV V%d.B16, V%d.B16", j, 5+j)
	}
}

func (a *ripemdNEON) passEnd(l, r [5]string) {
	g := a.g
	for i := 0; i < 5; i++ {
		dst := a.reg(10 + i)
		t := a.temp()
		g.l("VADD %s.S4, %s.S4, %s.S4", r[(i+3)%5], l[(i+2)%5], dst)
		g.l("FMOVQ %d(R4), F%s", ((i+1)%5)*rowBytes, t[1:])
		g.l("VADD %s.S4, %s.S4, %s.S4", t, dst, dst)
	}
	g.l("ADD $%d, R4, R4", secBytes)
	g.l("SUBS $1, R2, R2")
	g.l("BNE pass")
	for j := 0; j < 5; j++ {
		off := rowOff(secAcc, j)
		g.l("FMOVQ %d(R0), F15", off)
		g.l("VEOR V%d.B16, V15.B16, V15.B16", 10+j)
		g.l("FMOVQ F15, %d(R0)", off)
	}
	g.l("SUBS $1, R1, R1")
	g.l("BNE iter")
}

func (a *ripemdNEON) epilogue() {
	g := a.g
	for j := 0; j < 5; j++ {
		g.l("FMOVQ F%d, %d(R0)", 10+j, rowOff(secU, j))
	}
	g.comment("leave no key material in the vector registers")
	for i := 0; i < 32; i++ {
		g.l("VEOR V%d.B16, V%d.B16, V%d.B16", i, i, i)
	}
	g.l("RET")
	g.l("")
}
