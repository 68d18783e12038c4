package main

// SSE2 kernels: four blocks per xmm register, for every amd64 CPU without
// AVX2 (SSE2 is part of the amd64 baseline). The structure is the AVX2
// kernel's (transpose, rounds on whole registers, transpose back), but
// SSE2 instructions overwrite their first source, so every operation
// here works in place on a value that dies at it and copies only when
// both operands live on. There are no broadcast loads either: the kernel
// first writes each round-key word four times into a 16-byte-aligned
// table on its stack (legacy SSE memory operands must be aligned), XORs
// round keys straight from it, and wipes it before returning.

import (
	"fmt"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/cryptvol/cryptvol/ciphers/serpent/_asm/circuit"
)

// sse emits SSE2 operations. keys points at the aligned table: round-key
// word w broadcast at 16*w, all-ones (for NOT) at 16*132.
type sse struct {
	keys reg.GPVirtual
}

const sseOnes = 16 * 132

func (v *sse) copyOf(a reg.VecVirtual) reg.VecVirtual {
	r := XMM()
	MOVO(a, r)
	return r
}

// rol rotates a left by n in place.
func (v *sse) rol(a reg.VecVirtual, n int) {
	t := v.copyOf(a)
	if n == 1 {
		PADDL(a, a)
	} else {
		PSLLL(U8(n), a)
	}
	PSRLL(U8(32-n), t)
	POR(t, a)
}

// shlXor sets dst ^= a << n.
func (v *sse) shlXor(dst, a reg.VecVirtual, n int) {
	t := v.copyOf(a)
	PSLLL(U8(n), t)
	PXOR(t, dst)
}

func (v *sse) key(x *[4]reg.VecVirtual, i int) {
	for j := 0; j < 4; j++ {
		PXOR(Mem{Base: v.keys, Disp: 16 * (4*i + j)}, x[j])
	}
}

// sbox applies Bool circuit n (0-7 forward, 8-15 inverse) in place where
// the circuit lets it.
func (v *sse) sbox(x *[4]reg.VecVirtual, n int) {
	c := circuit.Bool[n]
	node := make([]reg.VecVirtual, len(c.Gates))
	copy(node, x[:])
	lastUse := make([]int, len(c.Gates))
	for i, g := range c.Gates {
		switch g.Op {
		case circuit.In:
		case circuit.Not:
			lastUse[g.A] = i
		default:
			lastUse[g.A], lastUse[g.B] = i, i
		}
	}
	for _, o := range c.Out {
		lastUse[o] = len(c.Gates)
	}
	for i, g := range c.Gates {
		if g.Op == circuit.In {
			continue
		}
		if g.Op == circuit.Not {
			r := node[g.A]
			if lastUse[g.A] != i {
				r = v.copyOf(r)
			}
			PXOR(Mem{Base: v.keys, Disp: sseOnes}, r)
			node[i] = r
			continue
		}
		a, b := g.A, g.B
		commutes := g.Op != circuit.AndNot
		if lastUse[a] != i && commutes && lastUse[b] == i {
			a, b = b, a
		}
		r := node[a]
		if lastUse[a] != i || a == b {
			r = v.copyOf(r)
		}
		switch g.Op {
		case circuit.And:
			PAND(node[b], r)
		case circuit.Or:
			POR(node[b], r)
		case circuit.Xor:
			PXOR(node[b], r)
		case circuit.AndNot: // r = ^r & b
			PANDN(node[b], r)
		default:
			panic("sse2: gate " + g.Op.String())
		}
		node[i] = r
	}
	for j := 0; j < 4; j++ {
		x[j] = node[c.Out[j]]
	}
}

func (v *sse) linear(x *[4]reg.VecVirtual) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	v.rol(x0, 13)
	v.rol(x2, 3)
	PXOR(x0, x1)
	PXOR(x2, x1)
	PXOR(x2, x3)
	v.shlXor(x3, x0, 3)
	v.rol(x1, 1)
	v.rol(x3, 7)
	PXOR(x1, x0)
	PXOR(x3, x0)
	PXOR(x3, x2)
	v.shlXor(x2, x1, 7)
	v.rol(x0, 5)
	v.rol(x2, 22)
}

func (v *sse) linearInverse(x *[4]reg.VecVirtual) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	v.rol(x2, 32-22)
	v.rol(x0, 32-5)
	PXOR(x3, x2)
	v.shlXor(x2, x1, 7)
	PXOR(x1, x0)
	PXOR(x3, x0)
	v.rol(x3, 32-7)
	v.rol(x1, 32-1)
	PXOR(x2, x3)
	v.shlXor(x3, x0, 3)
	PXOR(x0, x1)
	PXOR(x2, x1)
	v.rol(x2, 32-3)
	v.rol(x0, 32-13)
}

// transpose swaps rows and columns of the 4x4 dword matrix x0..x3 (its own
// inverse).
func (v *sse) transpose(x *[4]reg.VecVirtual) {
	t1 := v.copyOf(x[0])
	PUNPCKHLQ(x[1], t1) // x0.2 x1.2 x0.3 x1.3
	PUNPCKLLQ(x[1], x[0])
	t3 := v.copyOf(x[2])
	PUNPCKHLQ(x[3], t3)
	PUNPCKLLQ(x[3], x[2])
	y1 := v.copyOf(x[0])
	PUNPCKHQDQ(x[2], y1)
	PUNPCKLQDQ(x[2], x[0])
	y3 := v.copyOf(t1)
	PUNPCKHQDQ(t3, y3)
	PUNPCKLQDQ(t3, t1)
	x[1], x[2], x[3] = y1, t1, y3
}

// alignedLocal reserves size bytes of stack and returns a register holding
// a 16-byte-aligned pointer into it.
func alignedLocal(size int) reg.GPVirtual {
	buf := AllocLocal(size + 16)
	p := GP64()
	LEAQ(buf, p)
	ADDQ(U8(15), p)
	ANDQ(I8(-16), p)
	return p
}

// sseKernel emits one SSE2 function processing n iterations of `groups`
// interleaved registers groups of four blocks, plain or fused XTS.
func sseKernel(decrypt bool, groups int, xts bool) {
	const lanes = 4
	dir := "encrypt"
	if decrypt {
		dir = "decrypt"
	}
	name := "SSE2"
	if groups > 1 {
		name += fmt.Sprintf("x%d", groups)
	}
	fn := dir + name
	blocks := lanes * groups
	step := 16 * blocks
	if xts {
		fn = "xts" + strings.ToUpper(dir[:1]) + dir[1:] + name
		TEXT(fn, 0, "func(rk *[132]uint32, dst, src *byte, n int, tweaks *byte, per int)")
		Pragma("noescape")
		Doc(fmt.Sprintf("%s %ss n runs of %d blocks in XTS mode with SSE2. Every", fn, dir, blocks),
			"sector is per runs long and tweaks holds the 16-byte initial tweak of",
			"each sector, n/per of them.")
	} else {
		TEXT(fn, 0, "func(rk *[132]uint32, dst, src *byte, n int)")
		Pragma("noescape")
		Doc(fmt.Sprintf("%s %ss n runs of %d blocks from src to dst with SSE2.", fn, dir, blocks))
	}
	v := &sse{keys: alignedLocal(16*132 + 16)}
	var tw *xtsTweaks
	if xts {
		buf := AllocLocal(2*step + 16)
		tw = newXTSTweaks(fn, blocks)
		LEAQ(buf, tw.cur)
		ADDQ(U8(15), tw.cur)
		ANDQ(I8(-16), tw.cur)
		LEAQ(Mem{Base: tw.cur, Disp: step}, tw.nxt)
	}
	rk := Load(Param("rk"), GP64())
	// Broadcast the 132 key words into the table, then all-ones.
	for i := 0; i < 33; i++ {
		k := XMM()
		MOVOU(Mem{Base: rk, Disp: 16 * i}, k)
		for j := 0; j < 4; j++ {
			b := XMM()
			PSHUFD(U8(0x55*j), k, b)
			MOVO(b, Mem{Base: v.keys, Disp: 16 * (4*i + j)})
		}
	}
	ones := XMM()
	PCMPEQL(ones, ones)
	MOVO(ones, Mem{Base: v.keys, Disp: sseOnes})

	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("n"), GP64())
	if xts {
		tw.start()
	}
	Label(fn + "_loop")
	x := make([][4]reg.VecVirtual, groups)
	for g := range x {
		for j := range x[g] {
			x[g][j] = XMM()
			MOVOU(Mem{Base: src, Disp: (4*g + j) * 16}, x[g][j])
			if xts {
				PXOR(Mem{Base: tw.cur, Disp: (4*g + j) * 16}, x[g][j])
			}
		}
		v.transpose(&x[g])
	}
	perRound := func(r int) {
		if xts {
			tw.perRound(r)
		}
	}
	each := func(f func(x *[4]reg.VecVirtual)) {
		for g := range x {
			f(&x[g])
		}
	}
	if !decrypt {
		for r := 0; r < 32; r++ {
			perRound(r)
			each(func(x *[4]reg.VecVirtual) {
				v.key(x, r)
				v.sbox(x, r%8)
				if r < 31 {
					v.linear(x)
				}
			})
		}
		each(func(x *[4]reg.VecVirtual) { v.key(x, 32) })
	} else {
		each(func(x *[4]reg.VecVirtual) { v.key(x, 32) })
		for r := 31; r >= 0; r-- {
			perRound(31 - r)
			each(func(x *[4]reg.VecVirtual) {
				if r < 31 {
					v.linearInverse(x)
				}
				v.sbox(x, 8+r%8)
				v.key(x, r)
			})
		}
	}
	for g := range x {
		v.transpose(&x[g])
		for j := range x[g] {
			if xts {
				PXOR(Mem{Base: tw.cur, Disp: (4*g + j) * 16}, x[g][j])
			}
			MOVOU(x[g][j], Mem{Base: dst, Disp: (4*g + j) * 16})
		}
	}
	if xts {
		tw.endRun()
	}
	ADDQ(U32(step), src)
	ADDQ(U32(step), dst)
	DECQ(n)
	JNZ(LabelRef(fn + "_loop"))
	// No round key stays behind on the stack.
	zero := XMM()
	PXOR(zero, zero)
	for off := 0; off <= sseOnes; off += 16 {
		MOVO(zero, Mem{Base: v.keys, Disp: off})
	}
	RET()
}
