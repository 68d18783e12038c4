// Command genarm writes serpent_arm.s: Serpent with NEON on 32-bit ARM
// (ARMv7-A), four blocks per 128-bit register group, one block per 32-bit
// lane, `groups` groups per loop with their instructions interleaved for
// in-order cores (Cortex-A7/A53 run 32-bit Raspberry Pi OS).
//
// The blocks are loaded with VLD1 and transposed with VTRN.32 and VSWP so
// that register j of a group holds word xj of its four blocks, the
// bitsliced layout; the S-boxes are the circuits of package circuit, as in
// the arm64 kernel. Go's arm assembler has no NEON instructions, so the
// vector code is built and register-allocated by ciphers/internal/armneon and
// printed as WORDs with their GNU mnemonics (checked against binutils by
// ciphers/internal/armneon's tests).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/cryptvol/cryptvol/ciphers/internal/armneon"
	"github.com/cryptvol/cryptvol/ciphers/serpent/_asm/circuit"
)

// Core registers: R0 round keys, R1 src, R2 dst, R3 loop count, R4
// address temporary.
const (
	rKey  = 0
	rSrc  = 1
	rDst  = 2
	rTmp  = 4
	rScr  = 5 // spill slots in the frame
	rXin  = 6 // XTS tweaks, read before the rounds
	rXout = 7 // and after
)

type V = armneon.V

func sbox(p *armneon.Prog, x *[4]V, n int) {
	c := circuit.Bool[n]
	node := make([]V, len(c.Gates))
	copy(node, x[:])
	for i, g := range c.Gates {
		switch g.Op {
		case circuit.In:
		case circuit.And:
			node[i] = p.And(node[g.A], node[g.B])
		case circuit.Or:
			node[i] = p.Orr(node[g.A], node[g.B])
		case circuit.Xor:
			node[i] = p.Eor(node[g.A], node[g.B])
		case circuit.AndNot: // ^A & B
			node[i] = p.Bic(node[g.B], node[g.A])
		case circuit.Not:
			node[i] = p.Not(node[g.A])
		default:
			panic(g.Op)
		}
	}
	for j := range x {
		x[j] = node[c.Out[j]]
	}
}

func linear(p *armneon.Prog, x *[4]V) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	x0 = p.Rotl32(x0, 13)
	x2 = p.Rotl32(x2, 3)
	x1 = p.Xor3(x1, x0, x2)
	x3 = p.Xor3(x3, x2, p.Shl(x0, 3, 32))
	x1 = p.Rotl32(x1, 1)
	x3 = p.Rotl32(x3, 7)
	x0 = p.Xor3(x0, x1, x3)
	x2 = p.Xor3(x2, x3, p.Shl(x1, 7, 32))
	x0 = p.Rotl32(x0, 5)
	x2 = p.Rotl32(x2, 22)
	*x = [4]V{x0, x1, x2, x3}
}

func linearInverse(p *armneon.Prog, x *[4]V) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	x2 = p.Rotl32(x2, 32-22)
	x0 = p.Rotl32(x0, 32-5)
	x2 = p.Xor3(x2, x3, p.Shl(x1, 7, 32))
	x0 = p.Xor3(x0, x1, x3)
	x3 = p.Rotl32(x3, 32-7)
	x1 = p.Rotl32(x1, 32-1)
	x3 = p.Xor3(x3, x2, p.Shl(x0, 3, 32))
	x1 = p.Xor3(x1, x0, x2)
	x2 = p.Rotl32(x2, 32-3)
	x0 = p.Rotl32(x0, 32-13)
	*x = [4]V{x0, x1, x2, x3}
}

// load reads four blocks and transposes them: word j of block b lands in
// lane b of the result's register j.
func load(p *armneon.Prog, xts bool) [4]V {
	var b [4]V
	for i := range b {
		b[i] = p.Load(rSrc)
		if xts {
			b[i] = p.Eor(b[i], p.Load(rXin))
		}
	}
	t0, t1 := p.Trn(b[0], b[1], 32) // (a0 b0 a2 b2), (a1 b1 a3 b3)
	t2, t3 := p.Trn(b[2], b[3], 32)
	x0, x2 := p.SwapHL(t0, t2)
	x1, x3 := p.SwapHL(t1, t3)
	return [4]V{x0, x1, x2, x3}
}

// store undoes load's transposition and writes the four blocks.
func store(p *armneon.Prog, x [4]V, xts bool) {
	t0, t2 := p.SwapHL(x[0], x[2])
	t1, t3 := p.SwapHL(x[1], x[3])
	b0, b1 := p.Trn(t0, t1, 32)
	b2, b3 := p.Trn(t2, t3, 32)
	for _, v := range []V{b0, b1, b2, b3} {
		if xts {
			v = p.Eor(v, p.Load(rXout))
		}
		p.Store(v, rDst)
	}
}

func body(groups int, decrypt, xts bool) *armneon.Prog {
	p := &armneon.Prog{}
	x := make([][4]V, groups)
	for g := range x {
		x[g] = load(p, xts)
	}
	addKey := func(r int) {
		var k [4]V
		for j := range k {
			k[j] = p.LoadDup32(rKey, 16*r+4*j)
		}
		for g := range x {
			for j := range k {
				x[g][j] = p.Eor(x[g][j], k[j])
			}
		}
	}
	each := func(f func(x *[4]V)) {
		fns := make([]func(), groups)
		for g := range x {
			g := g
			fns[g] = func() { f(&x[g]) }
		}
		p.Interleave(fns...)
	}
	if !decrypt {
		for r := 0; r < 32; r++ {
			addKey(r)
			each(func(x *[4]V) {
				sbox(p, x, r%8)
				if r < 31 {
					linear(p, x)
				}
			})
		}
		addKey(32)
	} else {
		addKey(32)
		for r := 31; r >= 0; r-- {
			each(func(x *[4]V) {
				if r < 31 {
					linearInverse(p, x)
				}
				sbox(p, x, 8+r%8)
			})
			addKey(r)
		}
	}
	for g := range x {
		store(p, x[g], xts)
	}
	return p
}

// function writes one kernel:
//
//	func encryptNEON(rk *[132]uint32, dst, src *byte, n int)
//	func encryptXTSNEON(rk *[132]uint32, dst, src, x *byte, n int)
//
// (and the decrypt ones) for n runs of 4*groups blocks; the XTS kernels
// XOR block i with the 16 bytes at x+16i before and after the rounds.
func function(b *strings.Builder, groups int, decrypt, xts bool) {
	name := "encrypt"
	if decrypt {
		name = "decrypt"
	}
	if xts {
		name += "XTS"
	}
	name += "NEON"
	lines, slots, st := body(groups, decrypt, xts).Allocate(armneon.ARM{TmpReg: rTmp}, rScr)
	fmt.Fprintf(os.Stderr, "%s: %d blocks per loop, %d vector operations, %d moves, %d spills and %d reloads in %d slots\n",
		name, 4*groups, st.Insts, st.Moves, st.Spills, st.Reloads, slots)
	sig, args := "rk *[132]uint32, dst, src *byte, n int", 16
	if xts {
		sig, args = "rk *[132]uint32, dst, src, x *byte, n int", 20
	}
	fmt.Fprintf(b, "\n// func %s(%s)\n", name, sig)
	fmt.Fprintf(b, "// n runs of %d blocks. The frame holds the spill slots, from 4(R13)\n// (0(R13) is the saved link register); they are zeroed before returning.\n", 4*groups)
	fmt.Fprintf(b, "TEXT ·%s(SB), NOSPLIT, $%d-%d\n", name, 16*slots, args)
	fmt.Fprintf(b, "\tADD $4, R13, R%d\n\tMOVW rk+0(FP), R%d\n\tMOVW dst+4(FP), R%d\n\tMOVW src+8(FP), R%d\n", rScr, rKey, rDst, rSrc)
	if xts {
		fmt.Fprintf(b, "\tMOVW x+12(FP), R%d\n\tMOVW R%d, R%d\n\tMOVW n+16(FP), R3\n", rXin, rXin, rXout)
	} else {
		b.WriteString("\tMOVW n+12(FP), R3\n")
	}
	fmt.Fprintf(b, "%s_loop:\n", name)
	for _, l := range lines {
		b.WriteString("\t" + l + "\n")
	}
	fmt.Fprintf(b, "\tSUB.S $1, R3\n\tBNE %s_loop\n", name)
	t := armneon.ARM{TmpReg: rTmp}
	for _, l := range t.Encode(armneon.Inst{Kind: armneon.Const, Dst: []V{0}, C: 0}) {
		b.WriteString("\t" + l + "\n")
	}
	for i := 0; i < slots; i++ {
		for _, l := range t.Spill(0, rScr, 16*i) {
			b.WriteString("\t" + l + "\n")
		}
	}
	b.WriteString("\tRET\n")
}

func main() {
	out := flag.String("out", "serpent_arm.s", "output file")
	groups := flag.Int("groups", 2, "register groups of four blocks per loop")
	flag.Parse()
	var b strings.Builder
	b.WriteString("// Code generated by _asm/cmd/genarm; DO NOT EDIT.\n\n//go:build arm && !purego\n\n#include \"textflag.h\"\n")
	for _, decrypt := range []bool{false, true} {
		for _, xts := range []bool{false, true} {
			function(&b, *groups, decrypt, xts)
		}
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
