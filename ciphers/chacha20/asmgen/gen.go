//go:build ignore

// Command gen writes chacha20_amd64.s, the ChaCha kernels for amd64. Run it
// with "go generate" in ciphers/chacha20.
//
// Every kernel keeps one state word per vector register with one 32-bit
// lane per block (RFC 8439 section 2.3), so each quarter round is plain
// lane-wise adds, xors and rotates over as many blocks as a register has
// lanes, and a transpose at the end puts every block's 64 bytes back in
// order:
//
//   - AVX-512: sixteen blocks in zmm registers, VPROLD rotates; all sixteen
//     words stay in registers.
//   - AVX2: eight blocks in ymm registers; SSSE3 and SSE2: four blocks in
//     xmm registers. These have sixteen vector registers, one short of the
//     sixteen state words plus a scratch register for the rotates, so the
//     first row (words 0-3, the a of every quarter round) lives in an
//     aligned scratch area on the stack, and its registers serve as scratch.
//     A quarter round reads a once for each a += b and writes it back.
//     Rotates by 16 and 8 are byte shuffles (VPSHUFB, PSHUFB), except on
//     SSE2, which has no byte shuffle: 16 swaps the 16-bit halves with
//     PSHUFLW and PSHUFHW, the rest are shift, shift, or.
//
// Each kernel takes the number of rounds (any even number; ChaCha8, 12, 20).
package main

import (
	"bytes"
	"fmt"
	"os"
)

type gen struct{ b bytes.Buffer }

func (g *gen) l(format string, args ...any) {
	fmt.Fprintf(&g.b, "\t"+format+"\n", args...)
}

func (g *gen) label(name string) { fmt.Fprintf(&g.b, "%s:\n", name) }

func (g *gen) data(name string, words []uint32) {
	for i, w := range words {
		fmt.Fprintf(&g.b, "DATA %s<>+%d(SB)/4, $0x%08x\n", name, 4*i, w)
	}
	fmt.Fprintf(&g.b, "GLOBL %s<>(SB), RODATA|NOPTR, $%d\n\n", name, 4*len(words))
}

// The column and diagonal quarter rounds of a double round, each as its
// a, b, c, d word numbers.
var (
	columns   = [4][4]int{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}
	diagonals = [4][4]int{{0, 5, 10, 15}, {1, 6, 11, 12}, {2, 7, 8, 13}, {3, 4, 9, 14}}
)

func each(qs [4][4]int, f func(a, b, c, d int)) {
	for _, q := range qs {
		f(q[0], q[1], q[2], q[3])
	}
}

// header emits the TEXT line and loads the arguments: AX state, DX rounds
// (halved: the double-round count), DI dst, SI src, CX lumps.
func (g *gen) header(name string, frame int) {
	fmt.Fprintf(&g.b, "// func %s(state *[16]uint32, rounds int, dst, src *byte, lumps int)\n", name)
	if frame == 0 {
		fmt.Fprintf(&g.b, "TEXT ·%s(SB), NOSPLIT, $0-40\n", name)
	} else {
		// A frame this large is too much for the nosplit budget.
		fmt.Fprintf(&g.b, "TEXT ·%s(SB), $%d-40\n", name, frame)
	}
	g.l("MOVQ state+0(FP), AX")
	g.l("MOVQ rounds+8(FP), R9")
	g.l("SHRQ $1, R9")
	g.l("MOVQ dst+16(FP), DI")
	g.l("MOVQ src+24(FP), SI")
	g.l("MOVQ lumps+32(FP), CX")
}

// advanceCounter moves the caller's counter past the blocks about to be
// made: lumps << shift blocks (the 32-bit counter wraps).
func (g *gen) advanceCounter(shift int) {
	g.l("MOVQ CX, BX")
	g.l("SHLQ $%d, BX", shift)
	g.l("ADDL BX, 48(AX)")
}

// ---------------------------------------------------------------- AVX-512

func z(i int) string { return fmt.Sprintf("Z%d", i) }

func (g *gen) avx512() {
	const counters, step = 16, 17 // Z16 the block counters, Z17 sixteen 16s
	g.header("xorKeyStream16AVX512", 0)
	g.l("VPBROADCASTD 48(AX), Z%d", counters)
	g.l("VPADDD iota16<>(SB), Z%d, Z%d", counters, counters)
	g.l("MOVL $16, BX")
	g.l("VPBROADCASTD BX, Z%d", step)
	g.advanceCounter(4)
	g.label("lump16")
	for i := 0; i < 16; i++ {
		if i == 12 {
			g.l("VMOVDQA64 Z%d, Z12", counters)
		} else {
			g.l("VPBROADCASTD %d(AX), Z%d", 4*i, i)
		}
	}
	g.l("MOVQ R9, DX")
	g.label("doubleround16")
	for _, qs := range [][4][4]int{columns, diagonals} {
		for _, r := range [][2]int{{16, 12}, {8, 7}} {
			each(qs, func(a, b, c, d int) { g.l("VPADDD %s, %s, %s", z(b), z(a), z(a)) })
			each(qs, func(a, b, c, d int) { g.l("VPXORD %s, %s, %s", z(a), z(d), z(d)) })
			each(qs, func(a, b, c, d int) { g.l("VPROLD $%d, %s, %s", r[0], z(d), z(d)) })
			each(qs, func(a, b, c, d int) { g.l("VPADDD %s, %s, %s", z(d), z(c), z(c)) })
			each(qs, func(a, b, c, d int) { g.l("VPXORD %s, %s, %s", z(c), z(b), z(b)) })
			each(qs, func(a, b, c, d int) { g.l("VPROLD $%d, %s, %s", r[1], z(b), z(b)) })
		}
	}
	g.l("DECQ DX")
	g.l("JNZ doubleround16")
	for i := 0; i < 16; i++ {
		if i == 12 {
			g.l("VPADDD Z%d, Z12, Z12", counters)
		} else {
			g.l("VPADDD.BCST %d(AX), Z%d, Z%d", 4*i, i, i)
		}
	}
	// Transpose within 128-bit lanes: afterwards lane L of Z(4k+r) holds
	// words 4k..4k+3 of block 4L+r.
	for k := 0; k < 4; k++ {
		a, b, c, d := 4*k, 4*k+1, 4*k+2, 4*k+3
		g.l("VPUNPCKLDQ %s, %s, Z18", z(b), z(a))
		g.l("VPUNPCKHDQ %s, %s, Z19", z(b), z(a))
		g.l("VPUNPCKLDQ %s, %s, Z20", z(d), z(c))
		g.l("VPUNPCKHDQ %s, %s, Z21", z(d), z(c))
		g.l("VPUNPCKLQDQ Z20, Z18, %s", z(a))
		g.l("VPUNPCKHQDQ Z20, Z18, %s", z(b))
		g.l("VPUNPCKLQDQ Z21, Z19, %s", z(c))
		g.l("VPUNPCKHQDQ Z21, Z19, %s", z(d))
	}
	// Then across lanes: block 4L+r is lane L of Z(r), Z(4+r), Z(8+r),
	// Z(12+r), in that order.
	for r := 0; r < 4; r++ {
		u0, u1, u2, u3 := z(r), z(4+r), z(8+r), z(12+r)
		g.l("VSHUFI32X4 $0x44, %s, %s, Z22", u1, u0)
		g.l("VSHUFI32X4 $0xee, %s, %s, Z23", u1, u0)
		g.l("VSHUFI32X4 $0x44, %s, %s, Z24", u3, u2)
		g.l("VSHUFI32X4 $0xee, %s, %s, Z25", u3, u2)
		g.l("VSHUFI32X4 $0x88, Z24, Z22, Z26")
		g.l("VSHUFI32X4 $0xdd, Z24, Z22, Z27")
		g.l("VSHUFI32X4 $0x88, Z25, Z23, Z28")
		g.l("VSHUFI32X4 $0xdd, Z25, Z23, Z29")
		for L := 0; L < 4; L++ {
			off := 64 * (4*L + r)
			g.l("VPXORD %d(SI), Z%d, Z%d", off, 26+L, 26+L)
			g.l("VMOVDQU64 Z%d, %d(DI)", 26+L, off)
		}
	}
	g.l("VPADDD Z%d, Z%d, Z%d", step, counters, counters)
	g.l("ADDQ $1024, SI")
	g.l("ADDQ $1024, DI")
	g.l("DECQ CX")
	g.l("JNZ lump16")
	g.l("VZEROUPPER")
	g.l("RET\n")
}

// ---------------------------------------------------------------- AVX2

// The AVX2 scratch area, at R8 (SP rounded up to 32 bytes): the a row
// (words 0-3, 32 bytes each), then the sixteen input words broadcast to
// every lane (word 12 holding the eight block counters).
const (
	avx2A     = 0
	avx2Input = 4 * 32
	avx2Frame = avx2Input + 16*32 + 32 // + alignment slack
)

func y(i int) string { return fmt.Sprintf("Y%d", i) }

func avx2InputAt(i int) string { return fmt.Sprintf("%d(R8)", avx2Input+32*i) }
func avx2AAt(i int) string     { return fmt.Sprintf("%d(R8)", avx2A+32*i) }

func (g *gen) avx2() {
	g.header("xorKeyStream8AVX2", avx2Frame)
	g.l("LEAQ 31(SP), R8")
	g.l("ANDQ $-32, R8")
	for i := 0; i < 16; i++ {
		g.l("VPBROADCASTD %d(AX), Y0", 4*i)
		if i == 12 {
			g.l("VPADDD iota8<>(SB), Y0, Y0")
		}
		g.l("VMOVDQA Y0, %s", avx2InputAt(i))
	}
	g.advanceCounter(3)
	g.label("lump8")
	for i := 0; i < 4; i++ {
		g.l("VMOVDQA %s, Y0", avx2InputAt(i))
		g.l("VMOVDQA Y0, %s", avx2AAt(i))
	}
	for i := 4; i < 16; i++ {
		g.l("VMOVDQA %s, %s", avx2InputAt(i), y(i))
	}
	g.l("MOVQ R9, DX")
	g.label("doubleround8")
	for _, qs := range [][4][4]int{columns, diagonals} {
		for _, r := range [][2]int{{16, 12}, {8, 7}} {
			mask := "rot16<>(SB)"
			if r[0] == 8 {
				mask = "rot8<>(SB)"
			}
			// a += b, computed into the scratch register t = Y(a) and
			// stored back; d ^= a.
			each(qs, func(a, b, c, d int) { g.l("VPADDD %s, %s, %s", avx2AAt(a), y(b), y(a)) })
			each(qs, func(a, b, c, d int) { g.l("VMOVDQA %s, %s", y(a), avx2AAt(a)) })
			each(qs, func(a, b, c, d int) { g.l("VPXOR %s, %s, %s", y(a), y(d), y(d)) })
			each(qs, func(a, b, c, d int) { g.l("VPSHUFB %s, %s, %s", mask, y(d), y(d)) })
			each(qs, func(a, b, c, d int) { g.l("VPADDD %s, %s, %s", y(d), y(c), y(c)) })
			each(qs, func(a, b, c, d int) { g.l("VPXOR %s, %s, %s", y(c), y(b), y(b)) })
			each(qs, func(a, b, c, d int) { g.l("VPSLLD $%d, %s, %s", r[1], y(b), y(a)) })
			each(qs, func(a, b, c, d int) { g.l("VPSRLD $%d, %s, %s", 32-r[1], y(b), y(b)) })
			each(qs, func(a, b, c, d int) { g.l("VPOR %s, %s, %s", y(a), y(b), y(b)) })
		}
	}
	g.l("DECQ DX")
	g.l("JNZ doubleround8")
	for i := 4; i < 16; i++ {
		g.l("VPADDD %s, %s, %s", avx2InputAt(i), y(i), y(i))
	}
	// Transpose rows b, c, d within 128-bit lanes, with Y0-Y3 as scratch:
	// afterwards lane L of Y(4k+r) holds words 4k..4k+3 of block 4L+r.
	transpose := func(k, t int) {
		a, b, c, d := 4*k, 4*k+1, 4*k+2, 4*k+3
		g.l("VPUNPCKLDQ %s, %s, %s", y(b), y(a), y(t))
		g.l("VPUNPCKHDQ %s, %s, %s", y(b), y(a), y(t+1))
		g.l("VPUNPCKLDQ %s, %s, %s", y(d), y(c), y(t+2))
		g.l("VPUNPCKHDQ %s, %s, %s", y(d), y(c), y(t+3))
		g.l("VPUNPCKLQDQ %s, %s, %s", y(t+2), y(t), y(a))
		g.l("VPUNPCKHQDQ %s, %s, %s", y(t+2), y(t), y(b))
		g.l("VPUNPCKLQDQ %s, %s, %s", y(t+3), y(t+1), y(c))
		g.l("VPUNPCKHQDQ %s, %s, %s", y(t+3), y(t+1), y(d))
	}
	for k := 1; k < 4; k++ {
		transpose(k, 0)
	}
	// The second half of every block (words 8-15) is ready: lane 0 of
	// Y(8+r) and Y(12+r) for block r, lane 1 for block 4+r.
	out := func(lo, hi, t, block, half int) {
		off := 64*block + 32*half
		sel := "$0x20"
		if block >= 4 {
			sel = "$0x31"
		}
		g.l("VPERM2I128 %s, %s, %s, %s", sel, y(hi), y(lo), y(t))
		g.l("VPXOR %d(SI), %s, %s", off, y(t), y(t))
		g.l("VMOVDQU %s, %d(DI)", y(t), off)
	}
	for r := 0; r < 4; r++ {
		out(8+r, 12+r, 0, r, 1)
		out(8+r, 12+r, 1, 4+r, 1)
	}
	// Now the a row, with Y8-Y11 as scratch.
	for i := 0; i < 4; i++ {
		g.l("VMOVDQA %s, %s", avx2AAt(i), y(i))
		g.l("VPADDD %s, %s, %s", avx2InputAt(i), y(i), y(i))
	}
	transpose(0, 8)
	for r := 0; r < 4; r++ {
		out(r, 4+r, 8, r, 0)
		out(r, 4+r, 9, 4+r, 0)
	}
	g.l("VMOVDQA %s, Y0", avx2InputAt(12))
	g.l("VPADDD eight<>(SB), Y0, Y0")
	g.l("VMOVDQA Y0, %s", avx2InputAt(12))
	g.l("ADDQ $512, SI")
	g.l("ADDQ $512, DI")
	g.l("DECQ CX")
	g.l("JNZ lump8")
	g.l("VZEROUPPER")
	g.l("RET\n")
}

// ---------------------------------------------------------------- SSE2, SSSE3

// The SSE scratch area, at R8 (SP rounded up to 16 bytes): the a row, the
// sixteen broadcast input words (word 12: the four block counters), the
// rotate masks (SSSE3) and four 4s.
const (
	sseA     = 0
	sseInput = 4 * 16
	sseRot16 = sseInput + 16*16
	sseRot8  = sseRot16 + 16
	sseFour  = sseRot8 + 16
	sseFrame = sseFour + 16 + 16 // + alignment slack
)

func x(i int) string { return fmt.Sprintf("X%d", i) }

func sseInputAt(i int) string { return fmt.Sprintf("%d(R8)", sseInput+16*i) }
func sseAAt(i int) string     { return fmt.Sprintf("%d(R8)", sseA+16*i) }

func (g *gen) sse(ssse3 bool) {
	name := "xorKeyStream4SSE2"
	if ssse3 {
		name = "xorKeyStream4SSSE3"
	}
	g.header(name, sseFrame)
	g.l("LEAQ 15(SP), R8")
	g.l("ANDQ $-16, R8")
	for i := 0; i < 16; i++ {
		g.l("MOVL %d(AX), X0", 4*i)
		g.l("PSHUFD $0, X0, X0")
		if i == 12 {
			g.l("MOVOU iota4<>(SB), X1")
			g.l("PADDL X1, X0")
		}
		g.l("MOVO X0, %s", sseInputAt(i))
	}
	g.l("MOVL $4, BX")
	g.l("MOVL BX, X0")
	g.l("PSHUFD $0, X0, X0")
	g.l("MOVO X0, %d(R8)", sseFour)
	if ssse3 {
		g.l("MOVOU rot16<>(SB), X0")
		g.l("MOVO X0, %d(R8)", sseRot16)
		g.l("MOVOU rot8<>(SB), X0")
		g.l("MOVO X0, %d(R8)", sseRot8)
	}
	g.advanceCounter(2)
	lump, dr := "lump4sse2", "doubleround4sse2"
	if ssse3 {
		lump, dr = "lump4ssse3", "doubleround4ssse3"
	}
	g.label(lump)
	for i := 0; i < 4; i++ {
		g.l("MOVO %s, X0", sseInputAt(i))
		g.l("MOVO X0, %s", sseAAt(i))
	}
	for i := 4; i < 16; i++ {
		g.l("MOVO %s, %s", sseInputAt(i), x(i))
	}
	g.l("MOVQ R9, DX")
	g.label(dr)
	rotate := func(reg, tmp string, n int) {
		switch {
		case n == 16 && !ssse3:
			g.l("PSHUFLW $0xb1, %s, %s", reg, reg)
			g.l("PSHUFHW $0xb1, %s, %s", reg, reg)
		case n == 16:
			g.l("PSHUFB %d(R8), %s", sseRot16, reg)
		case n == 8 && ssse3:
			g.l("PSHUFB %d(R8), %s", sseRot8, reg)
		default:
			g.l("MOVO %s, %s", reg, tmp)
			g.l("PSLLL $%d, %s", n, reg)
			g.l("PSRLL $%d, %s", 32-n, tmp)
			g.l("POR %s, %s", tmp, reg)
		}
	}
	for _, qs := range [][4][4]int{columns, diagonals} {
		for _, r := range [][2]int{{16, 12}, {8, 7}} {
			// Once a is stored back, its register is the scratch of
			// both rotates.
			each(qs, func(a, b, c, d int) { g.l("MOVO %s, %s", sseAAt(a), x(a)) })
			each(qs, func(a, b, c, d int) { g.l("PADDL %s, %s", x(b), x(a)) })
			each(qs, func(a, b, c, d int) { g.l("MOVO %s, %s", x(a), sseAAt(a)) })
			each(qs, func(a, b, c, d int) { g.l("PXOR %s, %s", x(a), x(d)) })
			each(qs, func(a, b, c, d int) { rotate(x(d), x(a), r[0]) })
			each(qs, func(a, b, c, d int) { g.l("PADDL %s, %s", x(d), x(c)) })
			each(qs, func(a, b, c, d int) { g.l("PXOR %s, %s", x(c), x(b)) })
			each(qs, func(a, b, c, d int) { rotate(x(b), x(a), r[1]) })
		}
	}
	g.l("DECQ DX")
	g.l("JNZ %s", dr)
	for i := 4; i < 16; i++ {
		g.l("PADDL %s, %s", sseInputAt(i), x(i))
	}
	// Transpose each row of four words, with four scratch registers from
	// t, and write it out: afterwards X(4k+r) holds words 4k..4k+3 of
	// block r.
	transpose := func(k, t int) {
		a, b, c, d := 4*k, 4*k+1, 4*k+2, 4*k+3
		g.l("MOVO %s, %s", x(a), x(t))
		g.l("PUNPCKLLQ %s, %s", x(b), x(t))
		g.l("MOVO %s, %s", x(a), x(t+1))
		g.l("PUNPCKHLQ %s, %s", x(b), x(t+1))
		g.l("MOVO %s, %s", x(c), x(t+2))
		g.l("PUNPCKLLQ %s, %s", x(d), x(t+2))
		g.l("MOVO %s, %s", x(c), x(t+3))
		g.l("PUNPCKHLQ %s, %s", x(d), x(t+3))
		g.l("MOVO %s, %s", x(t), x(a))
		g.l("PUNPCKLQDQ %s, %s", x(t+2), x(a))
		g.l("MOVO %s, %s", x(t), x(b))
		g.l("PUNPCKHQDQ %s, %s", x(t+2), x(b))
		g.l("MOVO %s, %s", x(t+1), x(c))
		g.l("PUNPCKLQDQ %s, %s", x(t+3), x(c))
		g.l("MOVO %s, %s", x(t+1), x(d))
		g.l("PUNPCKHQDQ %s, %s", x(t+3), x(d))
		for r := 0; r < 4; r++ {
			off := 64*r + 16*k
			g.l("MOVOU %d(SI), %s", off, x(t))
			g.l("PXOR %s, %s", x(t), x(4*k+r))
			g.l("MOVOU %s, %d(DI)", x(4*k+r), off)
		}
	}
	for k := 1; k < 4; k++ {
		transpose(k, 0)
	}
	for i := 0; i < 4; i++ {
		g.l("MOVO %s, %s", sseAAt(i), x(i))
		g.l("PADDL %s, %s", sseInputAt(i), x(i))
	}
	transpose(0, 4)
	g.l("MOVO %s, X0", sseInputAt(12))
	g.l("PADDL %d(R8), X0", sseFour)
	g.l("MOVO X0, %s", sseInputAt(12))
	g.l("ADDQ $256, SI")
	g.l("ADDQ $256, DI")
	g.l("DECQ CX")
	g.l("JNZ %s", lump)
	g.l("RET\n")
}

func main() {
	g := &gen{}
	fmt.Fprint(&g.b, "// Code generated by asmgen/gen.go; DO NOT EDIT.\n\n//go:build amd64 && !purego\n\n#include \"textflag.h\"\n\n")
	iota := make([]uint32, 16)
	for i := range iota {
		iota[i] = uint32(i)
	}
	g.data("iota16", iota)
	g.data("iota8", iota[:8])
	g.data("iota4", iota[:4])
	g.data("eight", []uint32{8, 8, 8, 8, 8, 8, 8, 8})
	// Byte shuffles that rotate every 32-bit lane left by 16 and by 8.
	var rot16, rot8 []uint32
	for i := 0; i < 8; i++ {
		rot16 = append(rot16, 0x01000302+0x04040404*uint32(i%4))
		rot8 = append(rot8, 0x02010003+0x04040404*uint32(i%4))
	}
	g.data("rot16", rot16)
	g.data("rot8", rot8)
	g.avx512()
	g.avx2()
	g.sse(false)
	g.sse(true)
	if err := os.WriteFile("chacha20_amd64.s", g.b.Bytes(), 0o644); err != nil {
		panic(err)
	}
}
