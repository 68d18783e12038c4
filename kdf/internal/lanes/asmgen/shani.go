package main

import "fmt"

// shani writes a SHA-256 kernel on the SHA extensions: k chains
// interleaved (SHA256RNDS2 has a latency of several cycles; independent
// chains fill it), each in the instructions' own layout (state words as
// ABEF and CDGH, the message as four words per register). The chains'
// keyed states are converted to that layout once per call and kept on
// the stack, with T; U stays in registers.
//
// Registers of chain c: X(1+6c), X(2+6c) the state (ABEF, CDGH), the
// next four the message window. X0 is the W+K operand SHA256RNDS2 reads
// implicitly, X13-X15 are temporaries, so k is at most 2 (the SHA
// instructions reach only X0-X15). On Zen 4 two chains run in 1.2 times
// the time of one; a variant that kept the message window on the stack
// to fit three or four chains was slower than two, as the store-to-load
// latency lands on the schedule's dependency chain.
type shani struct {
	g    *gen
	s    *spec
	k    int
	pool *pool // constants, one word per entry, 4-word runs contiguous
}

func x(i int) string { return fmt.Sprintf("X%d", i) }

func (a *shani) st0(c int) string    { return x(1 + 6*c) }
func (a *shani) st1(c int) string    { return x(2 + 6*c) }
func (a *shani) msg(c, i int) string { return x(3 + 6*c + i%4) }

func (a *shani) frame(c, off int) int { return 96*c + off }

// Frame offsets within a chain's 96 bytes.
const (
	fInnerABEF = 0
	fInnerCDGH = 16
	fOuterABEF = 32
	fOuterCDGH = 48
	fAcc       = 64 // two registers' worth, natural word order
)

// quad returns a memory operand for the four consecutive words v.
func (a *shani) quad(v [4]uint64) string {
	// Entries are added in order, so a fresh run of four is contiguous;
	// look for an existing identical run first.
	for i := 0; i+4 <= len(a.pool.vals); i++ {
		if [4]uint64(a.pool.vals[i:i+4]) == v {
			return fmt.Sprintf("%s<>+%d(SB)", a.pool.name, 4*i)
		}
	}
	off := 4 * len(a.pool.vals)
	a.pool.vals = append(a.pool.vals, v[:]...)
	return fmt.Sprintf("%s<>+%d(SB)", a.pool.name, off)
}

// toNatural converts state (ABEF, CDGH) to words 0-3 in lo and 4-7 in hi.
func (a *shani) toNatural(abef, cdgh, lo, hi string) {
	a.g.l("VPSHUFD $0x1b, %s, X13", abef) // A B E F from the low word up
	a.g.l("VPSHUFD $0xb1, %s, X14", cdgh) // G H C D
	a.g.l("VPALIGNR $8, X13, X14, %s", hi)
	a.g.l("VPBLENDW $0xf0, X14, X13, %s", lo)
}

// fromNatural is the inverse.
func (a *shani) fromNatural(lo, hi, abef, cdgh string) {
	a.g.l("VPSHUFD $0xb1, %s, X13", lo) // B A D C
	a.g.l("VPSHUFD $0x1b, %s, X14", hi) // H G F E
	a.g.l("VPALIGNR $8, X14, X13, %s", abef)
	a.g.l("VPBLENDW $0xf0, X13, X14, %s", cdgh)
}

// gather loads words first..first+3 of section sec of chain c into dst.
func (a *shani) gather(sec, first, c int, dst string) {
	for i := 0; i < 4; i++ {
		off := rowOff(sec, first+i) + 4*c
		if i == 0 {
			a.g.l("VMOVD %d(AX), %s", off, dst)
		} else {
			a.g.l("VPINSRD $%d, %d(AX), %s, %s", i, off, dst, dst)
		}
	}
}

func (a *shani) scatter(src string, sec, first, c int) {
	for i := 0; i < 4; i++ {
		off := rowOff(sec, first+i) + 4*c
		if i == 0 {
			a.g.l("VMOVD %s, %d(AX)", src, off)
		} else {
			a.g.l("VPEXTRD $%d, %s, %d(AX)", i, src, off)
		}
	}
}

// compress writes one compression of every chain with the keyed state
// at frame offsets fABEF/fCDGH; message words 0-7 are in msg(c, 0..1) and
// come out replaced by the result, in natural order.
func (a *shani) compress(fABEF, fCDGH int) {
	g, s := a.g, a.s
	sched := s.schedule()
	for c := 0; c < a.k; c++ {
		g.l("VMOVDQU %d(SP), %s", a.frame(c, fABEF), a.st0(c))
		g.l("VMOVDQU %d(SP), %s", a.frame(c, fCDGH), a.st1(c))
		g.l("VMOVDQU %s, %s", a.quad([4]uint64(s.pad[0:4])), a.msg(c, 2))
		g.l("VMOVDQU %s, %s", a.quad([4]uint64(s.pad[4:8])), a.msg(c, 3))
	}
	for grp := 0; grp < 16; grp++ {
		var k4 [4]uint64
		copy(k4[:], s.k[4*grp:])
		constant := sched[4*grp].isConst
		var kw [4]uint64
		for i := range kw {
			kw[i] = (k4[i] + sched[4*grp+i].val) & s.mask()
		}
		for c := 0; c < a.k; c++ {
			m := a.msg(c, grp)
			if grp >= 4 {
				// W[4g..4g+3] = σ1 terms (MSG2) + W[t-7] + σ0 terms (MSG1) + W[t-16]
				g.l("SHA256MSG1 %s, %s", a.msg(c, grp+1), m)
				g.l("VPALIGNR $4, %s, %s, X15", a.msg(c, grp+2), a.msg(c, grp+3))
				g.l("VPADDD X15, %s, %s", m, m)
				g.l("SHA256MSG2 %s, %s", a.msg(c, grp+3), m)
			}
			if constant {
				g.l("VMOVDQU %s, X0", a.quad(kw))
			} else {
				g.l("VPADDD %s, %s, X0", a.quad(k4), m)
			}
			g.l("SHA256RNDS2 X0, %s, %s", a.st0(c), a.st1(c))
			g.l("VPSHUFD $0x0e, X0, X0")
			g.l("SHA256RNDS2 X0, %s, %s", a.st1(c), a.st0(c))
		}
	}
	for c := 0; c < a.k; c++ {
		g.l("VPADDD %d(SP), %s, %s", a.frame(c, fABEF), a.st0(c), a.st0(c))
		g.l("VPADDD %d(SP), %s, %s", a.frame(c, fCDGH), a.st1(c), a.st1(c))
		a.toNatural(a.st0(c), a.st1(c), a.msg(c, 0), a.msg(c, 1))
	}
}

func (a *shani) kernel(name string) {
	g := a.g
	frame := 96 * a.k
	g.l("// func %s(s *State, lane, n int)", name)
	g.l("TEXT ·%s(SB), $%d-24", name, frame)
	g.l("MOVQ s+0(FP), AX")
	g.l("MOVQ lane+8(FP), BX")
	g.l("LEAQ (AX)(BX*4), AX")
	g.l("MOVQ n+16(FP), CX")
	for c := 0; c < a.k; c++ {
		for _, kv := range [][3]int{{secInner, fInnerABEF, fInnerCDGH}, {secOuter, fOuterABEF, fOuterCDGH}} {
			a.gather(kv[0], 0, c, x(3))
			a.gather(kv[0], 4, c, x(4))
			a.fromNatural(x(3), x(4), x(1), x(2))
			g.l("VMOVDQU X1, %d(SP)", a.frame(c, kv[1]))
			g.l("VMOVDQU X2, %d(SP)", a.frame(c, kv[2]))
		}
		a.gather(secAcc, 0, c, x(3))
		a.gather(secAcc, 4, c, x(4))
		g.l("VMOVDQU X3, %d(SP)", a.frame(c, fAcc))
		g.l("VMOVDQU X4, %d(SP)", a.frame(c, fAcc+16))
	}
	for c := 0; c < a.k; c++ {
		a.gather(secU, 0, c, a.msg(c, 0))
		a.gather(secU, 4, c, a.msg(c, 1))
	}
	g.l("iter:")
	a.compress(fInnerABEF, fInnerCDGH)
	a.compress(fOuterABEF, fOuterCDGH)
	for c := 0; c < a.k; c++ {
		for h := 0; h < 2; h++ {
			off := a.frame(c, fAcc+16*h)
			g.l("VPXOR %d(SP), %s, X15", off, a.msg(c, h))
			g.l("VMOVDQU X15, %d(SP)", off)
		}
	}
	g.l("DECQ CX")
	g.l("JNZ iter")
	for c := 0; c < a.k; c++ {
		a.scatter(a.msg(c, 0), secU, 0, c)
		a.scatter(a.msg(c, 1), secU, 4, c)
		g.l("VMOVDQU %d(SP), X15", a.frame(c, fAcc))
		a.scatter("X15", secAcc, 0, c)
		g.l("VMOVDQU %d(SP), X15", a.frame(c, fAcc+16))
		a.scatter("X15", secAcc, 4, c)
	}
	g.comment("leave no key material on the stack or in the vector registers")
	g.l("VZEROALL")
	for off := 0; off < frame; off += 16 {
		g.l("VMOVDQU X0, %d(SP)", off)
	}
	g.l("RET")
	g.l("")
}
