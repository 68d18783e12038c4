// Command genarm64 writes serpent_arm64.s: Serpent with NEON on 16 blocks
// per loop, four 128-bit registers of four blocks each per group and four
// groups interleaved, one block per 32-bit lane.
//
// VLD4 loads four blocks and de-interleaves them so that register j holds
// word xj of each block, which is exactly the bitsliced layout; VST4 undoes
// it. The S-boxes are the AND/OR/XOR/ANDN/NOT circuits of package circuit.
// avo has no arm64 support, so this program builds the loop as a list of
// operations on virtual values, assigns the 32 vector registers itself and
// prints Go assembly. BIC and NOT, which the Go assembler does not know, are
// emitted as WORD encodings.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/cryptvol/cryptvol/ciphers/serpent/_asm/circuit"
)

const groups = 4

type kind int

const (
	opLoad  kind = iota // VLD4 of one group: 4 results
	opStore             // VST4 of one group: 4 sources
	opKey               // VLD4R of round key imm: 4 results
	opEor
	opAnd
	opOrr
	opBic // dst = a & ^b
	opNot
	opShl // dst = a << imm
	opSri // dst = tied(b) with a >> imm inserted: rotate's second half
)

type op struct {
	k    kind
	dst  []int // values defined
	src  []int // values read
	imm  int
	last []bool // per src: this is its last use
}

type prog struct {
	ops []op
	n   int // values allocated
}

func (p *prog) val() int { p.n++; return p.n - 1 }

func (p *prog) emit(k kind, imm int, src ...int) int {
	d := p.val()
	p.ops = append(p.ops, op{k: k, dst: []int{d}, src: src, imm: imm})
	return d
}

func (p *prog) quad(k kind, imm int, src ...int) [4]int {
	var q [4]int
	for i := range q {
		q[i] = p.val()
	}
	p.ops = append(p.ops, op{k: k, dst: q[:], src: src, imm: imm})
	return q
}

func (p *prog) rol(x, n int) int {
	t := p.emit(opShl, n, x)
	return p.emit(opSri, 32-n, x, t)
}

func (p *prog) ror(x, n int) int { return p.rol(x, 32-n) }

func (p *prog) xor3(a, b, c int) int { return p.emit(opEor, 0, p.emit(opEor, 0, a, b), c) }

func (p *prog) sbox(x *[4]int, n int) {
	c := circuit.Bool[n]
	node := make([]int, len(c.Gates))
	copy(node, x[:])
	for i, g := range c.Gates {
		switch g.Op {
		case circuit.In:
		case circuit.And:
			node[i] = p.emit(opAnd, 0, node[g.A], node[g.B])
		case circuit.Or:
			node[i] = p.emit(opOrr, 0, node[g.A], node[g.B])
		case circuit.Xor:
			node[i] = p.emit(opEor, 0, node[g.A], node[g.B])
		case circuit.AndNot: // ^A & B
			node[i] = p.emit(opBic, 0, node[g.B], node[g.A])
		case circuit.Not:
			node[i] = p.emit(opNot, 0, node[g.A])
		}
	}
	for j := range x {
		x[j] = node[c.Out[j]]
	}
}

func (p *prog) linear(x *[4]int) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	x0 = p.rol(x0, 13)
	x2 = p.rol(x2, 3)
	x1 = p.xor3(x1, x0, x2)
	x3 = p.xor3(x3, x2, p.emit(opShl, 3, x0))
	x1 = p.rol(x1, 1)
	x3 = p.rol(x3, 7)
	x0 = p.xor3(x0, x1, x3)
	x2 = p.xor3(x2, x3, p.emit(opShl, 7, x1))
	x0 = p.rol(x0, 5)
	x2 = p.rol(x2, 22)
	*x = [4]int{x0, x1, x2, x3}
}

func (p *prog) linearInverse(x *[4]int) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	x2 = p.ror(x2, 22)
	x0 = p.ror(x0, 5)
	x2 = p.xor3(x2, x3, p.emit(opShl, 7, x1))
	x0 = p.xor3(x0, x1, x3)
	x3 = p.ror(x3, 7)
	x1 = p.ror(x1, 1)
	x3 = p.xor3(x3, x2, p.emit(opShl, 3, x0))
	x1 = p.xor3(x1, x0, x2)
	x2 = p.ror(x2, 3)
	x0 = p.ror(x0, 13)
	*x = [4]int{x0, x1, x2, x3}
}

func (p *prog) addKey(x *[4]int, k [4]int) {
	for j := range x {
		x[j] = p.emit(opEor, 0, x[j], k[j])
	}
}

// body builds one loop iteration over `groups` groups.
func body(decrypt bool) *prog {
	p := &prog{}
	x := make([][4]int, groups)
	for g := range x {
		x[g] = p.quad(opLoad, g)
	}
	round := func(r int, f func(x *[4]int, k [4]int)) {
		k := p.quad(opKey, r)
		for g := range x {
			f(&x[g], k)
		}
	}
	if !decrypt {
		for r := 0; r < 32; r++ {
			round(r, func(x *[4]int, k [4]int) {
				p.addKey(x, k)
				p.sbox(x, r%8)
				if r < 31 {
					p.linear(x)
				}
			})
		}
		round(32, func(x *[4]int, k [4]int) { p.addKey(x, k) })
	} else {
		round(32, func(x *[4]int, k [4]int) { p.addKey(x, k) })
		for r := 31; r >= 0; r-- {
			if r < 31 {
				for g := range x {
					p.linearInverse(&x[g])
				}
			}
			for g := range x {
				p.sbox(&x[g], 8+r%8)
			}
			round(r, func(x *[4]int, k [4]int) { p.addKey(x, k) })
		}
	}
	for g := range x {
		p.ops = append(p.ops, op{k: opStore, src: x[g][:], imm: g})
	}
	return p
}

// allocate assigns vector registers by a linear scan: a value's register
// is freed after its last use. VLD4/VLD4R/VST4 need four consecutive
// registers; a store whose values are not so placed first copies them.
type allocator struct {
	reg  []int    // value -> register
	held [32]int  // register -> value+1, 0 if free
	out  []string // emitted lines
}

func (a *allocator) free(r int) { a.held[r] = 0 }

func (a *allocator) take(v int) int {
	for r := 0; r < 32; r++ {
		if a.held[r] == 0 {
			a.held[r] = v + 1
			a.reg[v] = r
			return r
		}
	}
	panic("out of vector registers")
}

func (a *allocator) takeQuad(vals []int) int {
	for r := 0; r+4 <= 32; r++ {
		if a.held[r] == 0 && a.held[r+1] == 0 && a.held[r+2] == 0 && a.held[r+3] == 0 {
			for i, v := range vals {
				a.held[r+i] = v + 1
				if v >= 0 {
					a.reg[v] = r + i
				}
			}
			return r
		}
	}
	panic("no four consecutive free vector registers")
}

func (a *allocator) emitf(format string, args ...any) {
	a.out = append(a.out, "\t"+fmt.Sprintf(format, args...))
}

func quadList(r int) string {
	return fmt.Sprintf("[V%d.S4, V%d.S4, V%d.S4, V%d.S4]", r, r+1, r+2, r+3)
}

func generate(p *prog, decrypt bool) []string {
	lastUse := make([]int, p.n)
	for i, o := range p.ops {
		for _, s := range o.src {
			lastUse[s] = i
		}
	}
	a := &allocator{reg: make([]int, p.n)}
	for i, o := range p.ops {
		// Registers of sources that die here may be reused for the result,
		// except by multi-register loads (written before all reads finish
		// only in the single-result case, which NEON allows).
		var dying []int
		for _, s := range o.src {
			if lastUse[s] == i {
				dying = append(dying, a.reg[s])
			}
		}
		switch o.k {
		case opLoad:
			r := a.takeQuad(o.dst)
			a.emitf("VLD4.P 64(R1), %s", quadList(r)) // groups load in order
		case opKey:
			r := a.takeQuad(o.dst)
			a.emitf("ADD $%d, R0, R4", 16*o.imm)
			a.emitf("VLD4R (R4), %s", quadList(r))
		case opStore:
			r0 := a.reg[o.src[0]]
			ok := r0+3 < 32
			for j := 1; j < 4 && ok; j++ {
				ok = a.reg[o.src[j]] == r0+j
			}
			if !ok {
				// The sources stay held while the copies are made, so the
				// target quad cannot overlap them.
				r0 = a.takeQuad([]int{-1, -1, -1, -1})
				for j, s := range o.src {
					a.emitf("VORR V%d.B16, V%d.B16, V%d.B16", a.reg[s], a.reg[s], r0+j)
				}
				for j := 0; j < 4; j++ {
					a.free(r0 + j)
				}
			}
			a.emitf("VST4.P %s, 64(R2)", quadList(r0)) // groups store in order
		case opSri:
			// Tied: the result lives in the register of src[1] (the
			// shifted-left half), which must die here.
			t := a.reg[o.src[1]]
			if lastUse[o.src[1]] != i {
				panic("rotate temporary still live")
			}
			a.emitf("VSRI $%d, V%d.S4, V%d.S4", o.imm, a.reg[o.src[0]], t)
			if lastUse[o.src[0]] == i {
				a.free(a.reg[o.src[0]])
			}
			a.held[t] = o.dst[0] + 1
			a.reg[o.dst[0]] = t
			continue
		default:
			srcRegs := make([]int, len(o.src))
			for j, s := range o.src {
				srcRegs[j] = a.reg[s]
			}
			for _, r := range dying {
				a.free(r)
			}
			dying = nil
			d := a.take(o.dst[0])
			switch o.k {
			case opEor:
				a.emitf("VEOR V%d.B16, V%d.B16, V%d.B16", srcRegs[1], srcRegs[0], d)
			case opAnd:
				a.emitf("VAND V%d.B16, V%d.B16, V%d.B16", srcRegs[1], srcRegs[0], d)
			case opOrr:
				a.emitf("VORR V%d.B16, V%d.B16, V%d.B16", srcRegs[1], srcRegs[0], d)
			case opBic: // BIC Vd.16B, Vn.16B, Vm.16B: Vd = Vn & ^Vm
				a.emitf("WORD $0x%08x // BIC V%d.16B, V%d.16B, V%d.16B", 0x4E601C00|uint32(srcRegs[1])<<16|uint32(srcRegs[0])<<5|uint32(d), d, srcRegs[0], srcRegs[1])
			case opNot: // NOT Vd.16B, Vn.16B
				a.emitf("WORD $0x%08x // NOT V%d.16B, V%d.16B", 0x6E205800|uint32(srcRegs[0])<<5|uint32(d), d, srcRegs[0])
			case opShl:
				a.emitf("VSHL $%d, V%d.S4, V%d.S4", o.imm, srcRegs[0], d)
			}
			continue
		}
		for _, r := range dying {
			a.free(r)
		}
	}
	return a.out
}

func main() {
	out := flag.String("out", "serpent_arm64.s", "output file")
	flag.Parse()
	var b strings.Builder
	b.WriteString("// Code generated by _asm/cmd/genarm64; DO NOT EDIT.\n\n//go:build arm64 && !purego\n\n#include \"textflag.h\"\n")
	for _, decrypt := range []bool{false, true} {
		name := "encryptNEON"
		if decrypt {
			name = "decryptNEON"
		}
		fmt.Fprintf(&b, "\n// func %s(rk *[132]uint32, dst, src *byte, n int)\n", name)
		fmt.Fprintf(&b, "TEXT ·%s(SB), NOSPLIT, $0-32\n", name)
		b.WriteString("\tMOVD rk+0(FP), R0\n\tMOVD dst+8(FP), R2\n\tMOVD src+16(FP), R1\n\tMOVD n+24(FP), R3\n")
		fmt.Fprintf(&b, "%s_loop:\n", name)
		for _, l := range generate(body(decrypt), decrypt) {
			b.WriteString(l + "\n")
		}
		fmt.Fprintf(&b, "\tSUBS $1, R3\n\tBNE %s_loop\n\tRET\n", name)
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
