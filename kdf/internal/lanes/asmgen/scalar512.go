package main

import "fmt"

// scalar512 writes a one-chain SHA-512 kernel: the rounds in general
// registers, the message schedule two words at a time in xmm registers
// beside them, as the fastest one-block SHA-512 code does. One chain's
// iterations depend on each other, so lanes do not help it: the 4-lane
// kernels compute one header-key block (a LUKS keyslot, a one-cipher
// VeraCrypt header) with three lanes idle, and these kernels exist for
// that case. Both compressions of an iteration run back to back in one
// loop, the digest staying in registers from one to the next, with the
// padding words and their K folded into constants.
//
// General registers: the state a..h in R8-R15 (the names rotate per
// round; after 80 rounds they are back in place), AX, BX, DI round
// temporaries, CX/DX this and the last round's a^b (Maj reuses the last
// one as b^c), SI the rounds' pointer into the frame and the keyed state
// of the compression around them; BP is left alone (frame-pointer
// unwinders read it), the iteration count is in the frame. Vector
// registers: X0-X7 a ring of the last sixteen schedule words, a pair
// each; X8-X15 temporaries. The frame holds W+K of each round (the rounds
// add it from memory), K, the keyed states and T.
type scalar512 struct {
	g *gen
	s *spec
	// variant selects the instructions:
	//   sse2:   RORQ, SSE2 (any amd64);
	//   bmi2:   RORX, and AVX (VEX three-operand) for the schedule. A
	//           variant with AVX-512 VL's VPRORQ and VPTERNLOGQ in the
	//           schedule ran no faster on Zen 4: the rounds are the limit.
	variant string
	name    string // of the kernel being written, for labels
}

// The frame of the scalar kernels.
const (
	scWK    = 0             // W[t]+K[t], 80 words
	scK     = scWK + 80*8   // K, 80 words, beside W+K for the rounds' loop
	scInner = scK + 80*8    // the keyed inner state, 8 words
	scOuter = scInner + 8*8 // the keyed outer state
	scAcc   = scOuter + 8*8 // T
	scCount = scAcc + 8*8   // iterations left
	scKey   = scCount + 8   // the keyed state of this compression
	scFrame = scKey + 8     // 1488 bytes, whole 16-byte stores when wiped
	scTable = "sc512<>"     // K[0..79], the padding W[8..15], K[t]+W[t] for t 8..15
	scPad   = 80 * 8        // offset of the padding words in the table
	scKPad  = scPad + 8*8   // offset of K+padding
)

var scRegs = [8]string{"R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"}

func xr(i int) string { return fmt.Sprintf("X%d", i) }

// ring is the xmm register of schedule pair k (words 2k, 2k+1).
func ring(k int) string { return xr(((k % 8) + 8) % 8) }

func (a *scalar512) vex() bool { return a.variant != "sse2" }

// emitTable writes the kernels' constant table.
func (a *scalar512) emitTable(g *gen) {
	var vals []uint64
	vals = append(vals, a.s.k...)
	vals = append(vals, a.s.pad[:]...)
	for t := 8; t < 16; t++ {
		vals = append(vals, a.s.k[t]+a.s.pad[t-8])
	}
	for i, v := range vals {
		g.l("DATA %s+%d(SB)/8, $0x%016x", scTable, 8*i, v)
	}
	g.l("GLOBL %s(SB), RODATA|NOPTR, $%d", scTable, 8*len(vals))
	g.l("")
}

// sigma sets dst to σ0 or σ1 (r) of the pair in x, using tmp1 and tmp2.
func (a *scalar512) sigma(x string, r [3]int, dst, tmp1, tmp2 string) {
	g := a.g
	switch a.variant {
	case "bmi2":
		// The shifts side by side and a tree of xors: the schedule's
		// dependency chain runs through here. σ0's rotation by 8 is a
		// byte shuffle.
		g.l("VPSRLQ $%d, %s, %s", r[0], x, dst)
		g.l("VPSLLQ $%d, %s, %s", 64-r[0], x, tmp1)
		g.l("VPXOR %s, %s, %s", tmp1, dst, dst)
		if r[1] == 8 {
			g.l("VPSHUFB %s, %s, %s", rot8Mask, x, tmp1)
		} else {
			g.l("VPSRLQ $%d, %s, %s", r[1], x, tmp1)
			g.l("VPSLLQ $%d, %s, %s", 64-r[1], x, tmp2)
			g.l("VPXOR %s, %s, %s", tmp2, tmp1, tmp1)
		}
		g.l("VPSRLQ $%d, %s, %s", r[2], x, tmp2)
		g.l("VPXOR %s, %s, %s", tmp1, dst, dst)
		g.l("VPXOR %s, %s, %s", tmp2, dst, dst)
	default:
		// Two-operand SSE2: factor the shifts so that each term costs
		// one shift and one xor instead of a copy too, with the three
		// right shifts lo < mid < hi:
		// x>>lo ^ x>>mid ^ x>>hi = ((x>>(hi-mid) ^ x)>>(mid-lo) ^ x)>>lo,
		// and the two left shifts of the rotations likewise. (Each term
		// from its own copy, for less latency, ran slower.)
		lo, mid, hi := sort3(r[0], r[1], r[2])
		g.l("MOVO %s, %s", x, dst)
		g.l("PSRLQ $%d, %s", hi-mid, dst)
		g.l("PXOR %s, %s", x, dst)
		g.l("PSRLQ $%d, %s", mid-lo, dst)
		g.l("PXOR %s, %s", x, dst)
		g.l("PSRLQ $%d, %s", lo, dst)
		// left shifts 64-r[0] and 64-r[1] (r[2] is the plain shift)
		l1, l2 := 64-r[0], 64-r[1]
		if l1 > l2 {
			l1, l2 = l2, l1
		}
		g.l("MOVO %s, %s", x, tmp1)
		g.l("PSLLQ $%d, %s", l2-l1, tmp1)
		g.l("PXOR %s, %s", x, tmp1)
		g.l("PSLLQ $%d, %s", l1, tmp1)
		g.l("PXOR %s, %s", tmp1, dst)
	}
}

func sort3(a, b, c int) (int, int, int) {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b, c = c, b
	}
	if a > b {
		a, b = b, a
	}
	return a, b, c
}

// oddPair sets dst to words 2k+1 and 2k+2: the high word of pair k and
// the low word of pair k+1.
func (a *scalar512) oddPair(k int, dst string) {
	if a.vex() {
		a.g.l("VPALIGNR $8, %s, %s, %s", ring(k), ring(k+1), dst)
		return
	}
	a.g.l("MOVO %s, %s", ring(k), dst)
	a.g.l("SHUFPD $1, %s, %s", ring(k+1), dst)
}

// storeWK writes W+K of pair k (in ring(k)) to the frame, using tmp.
func (a *scalar512) storeWK(k int, tmp string) {
	a.storeWKAt(k, fmt.Sprintf("%s+%d(SB)", scTable, 16*k), fmt.Sprintf("%d(SP)", scWK+16*k), tmp)
}

// storeWKAt adds the K pair at operand kp to ring(k) and stores the sum
// to operand dst.
func (a *scalar512) storeWKAt(k int, kp, dst, tmp string) {
	g := a.g
	if a.vex() {
		g.l("VPADDQ %s, %s, %s", kp, ring(k), tmp)
		g.l("VMOVDQU %s, %s", tmp, dst)
		return
	}
	g.l("MOVOU %s, %s", kp, tmp)
	g.l("PADDQ %s, %s", ring(k), tmp)
	g.l("MOVOU %s, %s", tmp, dst)
}

// schedulePair computes words t and t+1 (t = 2k >= 16) into ring(k),
// which held words t-16 and t-15, and adds the K pair at operand kp and
// stores the sum to operand dst.
func (a *scalar512) schedulePair(k int, kp, dst string) {
	g, s := a.g, a.s
	add := func(src, dst string) {
		if a.vex() {
			g.l("VPADDQ %s, %s, %s", src, dst, dst)
		} else {
			g.l("PADDQ %s, %s", src, dst)
		}
	}
	// σ0 of words t-15, t-14; words t-7, t-6; σ1 of words t-2, t-1.
	a.oddPair(k-8, "X8")
	a.sigma("X8", s.smallSigma0, "X9", "X10", "X11")
	a.oddPair(k-4, "X12")
	a.sigma(ring(k-1), s.smallSigma1, "X13", "X14", "X15")
	add("X9", ring(k))
	add("X12", ring(k))
	add("X13", ring(k))
	a.storeWKAt(k, kp, dst, "X8")
}

// round writes a round with W+K at operand wk on the state registers st
// (a..h), ab and bc the registers of this round's a^b and the last
// round's.
func (a *scalar512) round(wk string, st [8]string, ab, bc string) {
	g := a.g
	A, B, D, E, F, G, H := st[0], st[1], st[3], st[4], st[5], st[6], st[7]
	g.l("ADDQ %s, %s", wk, H)
	if a.variant == "sse2" {
		a.roundSSE2(A, D, E, F, G, H)
	} else {
		// Ch = ((f ^ g) & e) ^ g, in as many operations as
		// (e & f) + (^e & g) with ANDN and one temporary fewer.
		g.l("MOVQ %s, DI", F)
		g.l("XORQ %s, DI", G)
		g.l("ANDQ %s, DI", E)
		g.l("XORQ %s, DI", G)
		g.l("ADDQ DI, %s", H)
		g.l("RORXQ $14, %s, AX", E)
		g.l("RORXQ $18, %s, BX", E)
		g.l("XORQ BX, AX")
		g.l("RORXQ $41, %s, BX", E)
		g.l("XORQ BX, AX")
		g.l("ADDQ AX, %s", H)
		g.l("ADDQ %s, %s", H, D)
		g.l("RORXQ $28, %s, AX", A)
		g.l("RORXQ $34, %s, BX", A)
		g.l("XORQ BX, AX")
		g.l("RORXQ $39, %s, BX", A)
		g.l("XORQ BX, AX")
		g.l("ADDQ AX, %s", H)
	}
	// Maj = b ^ ((a ^ b) & (b ^ c))
	g.l("MOVQ %s, %s", A, ab)
	g.l("XORQ %s, %s", B, ab)
	g.l("ANDQ %s, %s", ab, bc)
	g.l("XORQ %s, %s", B, bc)
	g.l("ADDQ %s, %s", bc, H)
}

// roundSSE2 is the middle of a round without RORX: h += Ch(e, f, g) +
// Σ1(e), d += h, h += Σ0(a). RORQ writes only two of the flags, so it
// waits for the last instruction before it that wrote flags (a false
// dependency on AMD): each Σ chain starts right after one whose inputs
// are long ready (the add of W+K, the f ^ g of Ch) rather than after the
// round's additions.
// nestedRotr emits dst = rotr(r3, x ^ rotr(r2, x ^ rotr(r1, x))), a Σ
// function of SHA-512 written with one scratch register: the SSE2
// kernel has no three-operand rotate (RORX is BMI2).
func (a *scalar512) nestedRotr(x, dst string, r1, r2, r3 int) {
	g := a.g
	g.l("MOVQ %s, %s", x, dst)
	g.l("RORQ $%d, %s", r1, dst)
	g.l("XORQ %s, %s", x, dst)
	g.l("RORQ $%d, %s", r2, dst)
	g.l("XORQ %s, %s", x, dst)
	g.l("RORQ $%d, %s", r3, dst)
}

func (a *scalar512) roundSSE2(A, D, E, F, G, H string) {
	g := a.g
	// Σ0(a) = rotr28(a ^ rotr6(a ^ rotr5(a)))
	a.nestedRotr(A, "BX", 5, 6, 28)
	// Ch = ((f ^ g) & e) ^ g
	g.l("MOVQ %s, DI", F)
	g.l("XORQ %s, DI", G)
	// Σ1(e) = rotr14(e ^ rotr4(e ^ rotr23(e)))
	a.nestedRotr(E, "AX", 23, 4, 14)
	g.l("ANDQ %s, DI", E)
	g.l("XORQ %s, DI", G)
	g.l("ADDQ DI, %s", H)
	g.l("ADDQ AX, %s", H)
	g.l("ADDQ %s, %s", H, D)
	g.l("ADDQ BX, %s", H)
}

// pack moves the digest in R8-R15 to the first four schedule pairs.
func (a *scalar512) pack() {
	g := a.g
	for k := 0; k < 4; k++ {
		g.l("MOVQ %s, %s", scRegs[2*k], ring(k))
		g.l("MOVQ %s, X8", scRegs[2*k+1])
		if a.vex() {
			g.l("VPUNPCKLQDQ X8, %s, %s", ring(k), ring(k))
		} else {
			g.l("PUNPCKLQDQ X8, %s", ring(k))
		}
	}
}

// compress writes one compression of the message in ring pairs 0-3 (and
// the padding) with the keyed state the frame's scKey points to; the
// digest ends up in R8-R15, SI pointing at the keyed state.
func (a *scalar512) compress() {
	g := a.g
	for k := 0; k < 4; k++ {
		a.storeWK(k, "X8")
	}
	for k := 4; k < 8; k++ {
		if a.vex() {
			g.l("VMOVDQU %s+%d(SB), %s", scTable, scPad+16*(k-4), ring(k))
		} else {
			g.l("MOVOU %s+%d(SB), %s", scTable, scPad+16*(k-4), ring(k))
		}
	}
	g.l("MOVQ %d(SP), SI", scKey)
	for i, r := range scRegs {
		g.l("MOVQ %d(SI), %s", 8*i, r)
	}
	st := scRegs
	ab, bc := "CX", "DX"
	g.l("MOVQ %s, %s", st[1], bc)
	g.l("XORQ %s, %s", st[2], bc)
	next := func() {
		ab, bc = bc, ab
		st = [8]string{st[7], st[0], st[1], st[2], st[3], st[4], st[5], st[6]}
	}
	// Rounds 0-63 with the schedule of the words sixteen rounds ahead:
	// four times a loop of sixteen rounds, which bring the names of the
	// state, of a^b and of the ring back where they were, SI pointing at
	// their W+K (and K) in the frame. All 80 rounds unrolled (about 14 KB
	// of code a kernel) took 1.5 times as long for SSE2 and 1.0-1.6 times
	// for BMI2, depending on the machine's load, on Zen 4: a loop that
	// outgrew the micro-op cache.
	g.l("LEAQ %d(SP), SI", scWK)
	g.l("PCALIGN $32")
	g.l("%s_rounds:", a.name)
	for r := 0; r < 16; r++ {
		if r%2 == 0 {
			k := r/2 + 8
			a.schedulePair(k, fmt.Sprintf("%d(SI)", scK-scWK+16*k), fmt.Sprintf("%d(SI)", 16*k))
		}
		a.round(fmt.Sprintf("%d(SI)", 8*r), st, ab, bc)
		next()
	}
	g.l("ADDQ $128, SI")
	g.l("LEAQ %d(SP), AX", scWK+8*64)
	g.l("CMPQ SI, AX")
	g.l("JNE %s_rounds", a.name)
	for t := 64; t < a.s.rounds; t++ {
		a.round(fmt.Sprintf("%d(SP)", scWK+8*t), st, ab, bc)
		next()
	}
	g.l("MOVQ %d(SP), SI", scKey)
	for i, r := range scRegs {
		g.l("ADDQ %d(SI), %s", 8*i, r)
	}
}

func (a *scalar512) kernel(name string) {
	g := a.g
	a.name = name
	g.l("// func %s(s *State, lane, n int)", name)
	g.l("TEXT ·%s(SB), $%d-24", name, scFrame)
	g.l("MOVQ s+0(FP), AX")
	g.l("MOVQ lane+8(FP), BX")
	g.l("LEAQ (AX)(BX*8), AX")
	g.l("MOVQ n+16(FP), BX")
	g.l("MOVQ BX, %d(SP)", scCount)
	for _, sec := range [][2]int{{secInner, scInner}, {secOuter, scOuter}, {secAcc, scAcc}} {
		for j := 0; j < 8; j++ {
			g.l("MOVQ %d(AX), BX", rowOff(sec[0], j))
			g.l("MOVQ BX, %d(SP)", sec[1]+8*j)
		}
	}
	for j, r := range scRegs {
		g.l("MOVQ %d(AX), %s", rowOff(secU, j), r)
	}
	// K, and W+K of the padding words 8-15, into the frame where the
	// rounds' loop finds them by SI (a table in SB takes no index).
	mov := func(src, dst string) { g.l("MOVOU %s, X8", src); g.l("MOVOU X8, %s", dst) }
	for i := 0; i < 40; i++ {
		mov(fmt.Sprintf("%s+%d(SB)", scTable, 16*i), fmt.Sprintf("%d(SP)", scK+16*i))
	}
	for i := 0; i < 4; i++ {
		mov(fmt.Sprintf("%s+%d(SB)", scTable, scKPad+16*i), fmt.Sprintf("%d(SP)", scWK+64+16*i))
	}
	// Both compressions of an iteration run the same code (SI the inner,
	// then the outer state), which keeps the loop within the micro-op
	// cache: unrolled twice it ran from the decoders at half the speed.
	g.l("PCALIGN $32")
	g.l("%s_iter:", name)
	g.l("LEAQ %d(SP), SI", scInner)
	g.l("MOVQ SI, %d(SP)", scKey)
	g.l("PCALIGN $32")
	g.l("%s_pass:", name)
	a.pack()
	a.compress()
	g.l("ADDQ $64, SI")
	g.l("MOVQ SI, %d(SP)", scKey)
	g.l("LEAQ %d(SP), AX", scAcc)
	g.l("CMPQ SI, AX")
	g.l("JNE %s_pass", name)
	for j, r := range scRegs {
		g.l("XORQ %s, %d(SP)", r, scAcc+8*j)
	}
	g.l("DECQ %d(SP)", scCount)
	g.l("JNZ %s_iter", name)
	g.l("MOVQ s+0(FP), AX")
	g.l("MOVQ lane+8(FP), BX")
	g.l("LEAQ (AX)(BX*8), AX")
	for j, r := range scRegs {
		g.l("MOVQ %s, %d(AX)", r, rowOff(secU, j))
		g.l("MOVQ %d(SP), BX", scAcc+8*j)
		g.l("MOVQ BX, %d(AX)", rowOff(secAcc, j))
	}
	g.comment("leave no key material on the stack or in the vector registers")
	if a.vex() {
		g.l("VZEROALL")
		for off := 0; off < scFrame; off += 16 {
			g.l("VMOVDQU X0, %d(SP)", off)
		}
	} else {
		for i := 0; i < 16; i++ {
			g.l("PXOR %s, %s", xr(i), xr(i))
		}
		for off := 0; off < scFrame; off += 16 {
			g.l("MOVOU X0, %d(SP)", off)
		}
	}
	g.l("RET")
	g.l("")
}
