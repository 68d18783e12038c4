// Command gen writes serpent_amd64.s: Serpent on 8 blocks per AVX2 ymm word
// and 16 blocks per AVX-512 zmm word, one block per 32-bit lane.
//
// The blocks are loaded as they lie in memory and transposed (4x4 dwords
// inside each 128-bit lane) so that vector register j holds word xj of every
// block; the rounds then run the S-box circuits of package circuit and the
// linear transformation on whole registers, and the inverse transpose puts
// the blocks back in place. Which block sits in which lane is irrelevant as
// long as the same transpose is undone.
package main

import (
	"fmt"
	"strings"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/cryptvol/cryptvol/ciphers/serpent/_asm/circuit"
)

func main() {
	ConstraintExpr("amd64,!purego")
	for _, decrypt := range []bool{false, true} {
		kernel(false, decrypt, 1, false)
		kernel(false, decrypt, 2, false)
		kernel(true, decrypt, 1, false)
		kernel(true, decrypt, 2, false)
		kernel(true, decrypt, 4, false)
		kernel(false, decrypt, 2, true)
		kernel(true, decrypt, 2, true)
		kernel(true, decrypt, 4, true)
		sseKernel(decrypt, 1, false)
		sseKernel(decrypt, 2, false)
		sseKernel(decrypt, 2, true)
	}
	Generate()
}

// isa emits vector operations for one instruction set.
type isa struct {
	wide bool // AVX-512 on zmm, else AVX2 on ymm
	ones reg.VecVirtual
	rk   reg.GPVirtual
}

func (v *isa) vec() reg.VecVirtual {
	if v.wide {
		return ZMM()
	}
	return YMM()
}

func (v *isa) xor(a, b reg.VecVirtual) reg.VecVirtual {
	r := v.vec()
	if v.wide {
		VPXORD(b, a, r)
	} else {
		VPXOR(b, a, r)
	}
	return r
}

func (v *isa) and(a, b reg.VecVirtual) reg.VecVirtual {
	r := v.vec()
	if v.wide {
		VPANDD(b, a, r)
	} else {
		VPAND(b, a, r)
	}
	return r
}

func (v *isa) or(a, b reg.VecVirtual) reg.VecVirtual {
	r := v.vec()
	if v.wide {
		VPORD(b, a, r)
	} else {
		VPOR(b, a, r)
	}
	return r
}

// andNot returns ^a & b.
func (v *isa) andNot(a, b reg.VecVirtual) reg.VecVirtual {
	r := v.vec()
	if v.wide {
		VPANDND(b, a, r)
	} else {
		VPANDN(b, a, r)
	}
	return r
}

func (v *isa) shl(a reg.VecVirtual, n int) reg.VecVirtual {
	r := v.vec()
	VPSLLD(U8(n), a, r)
	return r
}

func (v *isa) rol(a reg.VecVirtual, n int) reg.VecVirtual {
	r := v.vec()
	if v.wide {
		VPROLD(U8(n), a, r)
		return r
	}
	t := v.vec()
	VPSLLD(U8(n), a, t)
	VPSRLD(U8(32-n), a, r)
	VPOR(t, r, r)
	return r
}

func (v *isa) ror(a reg.VecVirtual, n int) reg.VecVirtual {
	if v.wide {
		r := v.vec()
		VPRORD(U8(n), a, r)
		return r
	}
	return v.rol(a, 32-n)
}

// xor3 returns a ^ b ^ c; a's old value is dead afterwards.
func (v *isa) xor3(a, b, c reg.VecVirtual) reg.VecVirtual {
	if v.wide {
		VPTERNLOGD(U8(0x96), c, b, a)
		return a
	}
	return v.xor(v.xor(a, b), c)
}

// permuteImm rewrites a VPTERNLOGD immediate for operands (a, b, c) so that
// it gives the same function when the operands are passed in the order
// named by perm (perm[k] is the original position of new operand k).
func permuteImm(imm uint8, perm [3]int) uint8 {
	var out uint8
	for i := 0; i < 8; i++ {
		orig := [3]int{i >> 2 & 1, i >> 1 & 1, i & 1} // values of a, b, c
		j := orig[perm[0]]<<2 | orig[perm[1]]<<1 | orig[perm[2]]
		out |= (imm >> i & 1) << j
	}
	return out
}

// lut is VPTERNLOGD: bit (a<<2 | b<<1 | c) of imm. The instruction
// overwrites its first source, so a is copied first.
func (v *isa) lut(imm uint8, a, b, c reg.VecVirtual) reg.VecVirtual {
	r := v.vec()
	VMOVDQA64(a, r)
	VPTERNLOGD(U8(imm), c, b, r)
	return r
}

// xorMem xors a full-width memory operand into x.
func (v *isa) xorMem(m Mem, x reg.VecVirtual) {
	if v.wide {
		VPXORD(m, x, x)
	} else {
		VPXOR(m, x, x)
	}
}

// key xors round key i into the state.
func (v *isa) key(x *[4]reg.VecVirtual, i int) {
	for j := 0; j < 4; j++ {
		m := Mem{Base: v.rk, Disp: 4 * (4*i + j)}
		if v.wide {
			VPXORD_BCST(m, x[j], x[j])
		} else {
			k := v.vec()
			VPBROADCASTD(m, k)
			VPXOR(k, x[j], x[j])
		}
	}
}

// sbox applies circuit number n (0-7 forward, 8-15 inverse).
func (v *isa) sbox(x *[4]reg.VecVirtual, n int) {
	var c *circuit.Circuit
	if v.wide {
		c = circuit.Ternary[n]
	} else {
		c = circuit.Bool[n]
	}
	node := make([]reg.VecVirtual, len(c.Gates))
	copy(node, x[:])
	// lastUse[k] is the last gate reading node k; outputs live on.
	lastUse := make([]int, len(c.Gates))
	for i, g := range c.Gates {
		if g.Op != circuit.In {
			lastUse[g.A], lastUse[g.B], lastUse[g.C] = i, i, i
		}
	}
	for _, o := range c.Out {
		lastUse[o] = len(c.Gates)
	}
	for i, g := range c.Gates {
		if g.Op == circuit.Lut {
			// VPTERNLOGD overwrites its first operand: give that role to
			// an input that dies here, or copy.
			ops := [3]int{g.A, g.B, g.C}
			perms := [][3]int{{0, 1, 2}, {1, 0, 2}, {2, 1, 0}}
			done := false
			for _, p := range perms {
				d := ops[p[0]]
				if lastUse[d] == i && ops[p[1]] != d && ops[p[2]] != d {
					r := node[d]
					VPTERNLOGD(U8(permuteImm(g.Imm, p)), node[ops[p[2]]], node[ops[p[1]]], r)
					node[i] = r
					done = true
					break
				}
			}
			if done {
				continue
			}
		}
		switch g.Op {
		case circuit.In:
		case circuit.And:
			node[i] = v.and(node[g.A], node[g.B])
		case circuit.Or:
			node[i] = v.or(node[g.A], node[g.B])
		case circuit.Xor:
			node[i] = v.xor(node[g.A], node[g.B])
		case circuit.AndNot:
			node[i] = v.andNot(node[g.A], node[g.B])
		case circuit.Not:
			node[i] = v.xor(node[g.A], v.ones)
		case circuit.Lut:
			node[i] = v.lut(g.Imm, node[g.A], node[g.B], node[g.C])
		}
	}
	for j := 0; j < 4; j++ {
		x[j] = node[c.Out[j]]
	}
}

func (v *isa) linear(x *[4]reg.VecVirtual) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	x0 = v.rol(x0, 13)
	x2 = v.rol(x2, 3)
	x1 = v.xor3(x1, x0, x2)
	x3 = v.xor3(x3, x2, v.shl(x0, 3))
	x1 = v.rol(x1, 1)
	x3 = v.rol(x3, 7)
	x0 = v.xor3(x0, x1, x3)
	x2 = v.xor3(x2, x3, v.shl(x1, 7))
	x0 = v.rol(x0, 5)
	x2 = v.rol(x2, 22)
	x[0], x[1], x[2], x[3] = x0, x1, x2, x3
}

func (v *isa) linearInverse(x *[4]reg.VecVirtual) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	x2 = v.ror(x2, 22)
	x0 = v.ror(x0, 5)
	x2 = v.xor3(x2, x3, v.shl(x1, 7))
	x0 = v.xor3(x0, x1, x3)
	x3 = v.ror(x3, 7)
	x1 = v.ror(x1, 1)
	x3 = v.xor3(x3, x2, v.shl(x0, 3))
	x1 = v.xor3(x1, x0, x2)
	x2 = v.ror(x2, 3)
	x0 = v.ror(x0, 13)
	x[0], x[1], x[2], x[3] = x0, x1, x2, x3
}

// transpose swaps rows and columns of the 4x4 dword matrix in every 128-bit
// lane of r0..r3; it is its own inverse.
func (v *isa) transpose(x *[4]reg.VecVirtual) {
	t0, t1, t2, t3 := v.vec(), v.vec(), v.vec(), v.vec()
	VPUNPCKLDQ(x[1], x[0], t0)
	VPUNPCKHDQ(x[1], x[0], t1)
	VPUNPCKLDQ(x[3], x[2], t2)
	VPUNPCKHDQ(x[3], x[2], t3)
	y0, y1, y2, y3 := v.vec(), v.vec(), v.vec(), v.vec()
	VPUNPCKLQDQ(t2, t0, y0)
	VPUNPCKHQDQ(t2, t0, y1)
	VPUNPCKLQDQ(t3, t1, y2)
	VPUNPCKHQDQ(t3, t1, y3)
	x[0], x[1], x[2], x[3] = y0, y1, y2, y3
}

// kernel emits one function processing n iterations of `groups`
// interleaved register groups (8 blocks each with AVX2, 16 with AVX-512);
// interleaving gives the out-of-order core independent work.
//
// With xts, every block is masked before and after the cipher with its XTS
// tweak. The tweaks of the next iteration are computed with scalar
// instructions spread between this iteration's rounds, so they run on the
// integer units alongside the vector work, into the other half of a
// double buffer on the stack.
func kernel(wide, decrypt bool, groups int, xts bool) {
	name, lanes := "AVX2", 8
	if wide {
		name, lanes = "AVX512", 16
	}
	if groups > 1 {
		name += fmt.Sprintf("x%d", groups)
	}
	dir := "encrypt"
	if decrypt {
		dir = "decrypt"
	}
	fn := dir + name
	blocks := lanes * groups
	if xts {
		fn = "xts" + strings.ToUpper(dir[:1]) + dir[1:] + name
		TEXT(fn, 0, "func(rk *[132]uint32, dst, src *byte, n int, tweaks *byte, per int)")
		Pragma("noescape")
		Doc(fmt.Sprintf("%s %ss n runs of %d blocks in XTS mode. Every", fn, dir, blocks),
			"sector is per runs long and tweaks holds the 16-byte initial tweak of",
			"each sector, n/per of them.")
	} else {
		TEXT(fn, NOSPLIT, "func(rk *[132]uint32, dst, src *byte, n int)")
		Pragma("noescape")
		Doc(fmt.Sprintf("%s %ss n runs of %d blocks from src to dst with round keys rk.", fn, dir, blocks))
	}
	v := &isa{wide: wide}
	v.rk = GP64()
	Load(Param("rk"), v.rk)
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	n := Load(Param("n"), GP64())
	if !wide {
		v.ones = YMM()
		VPCMPEQD(v.ones, v.ones, v.ones)
	}
	step := 16 * blocks
	var tw *xtsTweaks
	if xts {
		buf := AllocLocal(2 * step)
		tw = newXTSTweaks(fn, blocks)
		LEAQ(buf, tw.cur)
		LEAQ(buf.Offset(step), tw.nxt)
		tw.start()
	}
	Label(fn + "_loop")
	x := make([][4]reg.VecVirtual, groups)
	for g := range x {
		for j := range x[g] {
			x[g][j] = v.vec()
			m := Mem{Base: src, Disp: (4*g + j) * 4 * lanes}
			if wide {
				VMOVDQU32(m, x[g][j])
			} else {
				VMOVDQU(m, x[g][j])
			}
			if xts {
				v.xorMem(Mem{Base: tw.cur, Disp: (4*g + j) * 4 * lanes}, x[g][j])
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
				v.xorMem(Mem{Base: tw.cur, Disp: (4*g + j) * 4 * lanes}, x[g][j])
			}
			m := Mem{Base: dst, Disp: (4*g + j) * 4 * lanes}
			if wide {
				VMOVDQU32(x[g][j], m)
			} else {
				VMOVDQU(x[g][j], m)
			}
		}
	}
	if xts {
		tw.endRun()
	}
	ADDQ(U32(step), src)
	ADDQ(U32(step), dst)
	DECQ(n)
	JNZ(LabelRef(fn + "_loop"))
	VZEROUPPER()
	RET()
}

// xtsTweaks generates XTS tweaks with scalar instructions into a double
// buffer on the stack: while the vector code masks this iteration's blocks
// with buffer cur, the next iteration's tweaks are computed into nxt,
// spread between the rounds so that they run on the integer units
// alongside the vector work.
type xtsTweaks struct {
	fn                                  string
	blocks                              int
	cur, nxt, lo, hi, t, tp, left, secs reg.GPVirtual
	label                               int
}

// newXTSTweaks allocates the registers; the caller points cur and nxt at
// two buffers of 16*blocks bytes and calls start.
func newXTSTweaks(fn string, blocks int) *xtsTweaks {
	return &xtsTweaks{fn: fn, blocks: blocks, cur: GP64(), nxt: GP64(), lo: GP64(), hi: GP64()}
}

// start loads the first sector's tweak, fills cur with the first
// iteration's tweaks and readies the next.
func (w *xtsTweaks) start() {
	w.tp = GP64()
	Load(Param("tweaks"), w.tp)
	w.left, w.secs = GP64(), GP64()
	Load(Param("per"), w.left)
	Load(Param("n"), w.secs)
	MOVQ(Mem{Base: w.tp}, w.lo)
	MOVQ(Mem{Base: w.tp, Disp: 8}, w.hi)
	ADDQ(U8(16), w.tp)
	w.t = GP64()
	for k := 0; k < w.blocks; k++ {
		w.step(k)
	}
	w.nextSector()
	XCHGQ(w.cur, w.nxt)
}

// nextSector counts down the runs left in the sector whose tweaks are
// being generated and, at its end, loads the next sector's initial tweak
// (if there is one: the generator runs one batch ahead of the cipher and
// must not read past the tweaks).
func (w *xtsTweaks) nextSector() {
	w.label++
	skip := fmt.Sprintf("%s_same%d", w.fn, w.label)
	DECQ(w.left)
	JNZ(LabelRef(skip))
	Load(Param("per"), w.left)
	SUBQ(w.left, w.secs)
	// <= 0, not == 0: the batch generated beside the last one's cipher
	// takes secs below zero, and its sector end must not load either.
	JLE(LabelRef(skip))
	MOVQ(Mem{Base: w.tp}, w.lo)
	MOVQ(Mem{Base: w.tp, Disp: 8}, w.hi)
	ADDQ(U8(16), w.tp)
	Label(skip)
}

// step stores the current tweak as block k of buffer nxt and multiplies
// it by α: shift the 128 bits left, fold the carry back in as
// x^7 + x^2 + x + 1.
func (w *xtsTweaks) step(k int) {
	MOVQ(w.lo, Mem{Base: w.nxt, Disp: 16 * k})
	MOVQ(w.hi, Mem{Base: w.nxt, Disp: 16*k + 8})
	MOVQ(w.hi, w.t)
	SARQ(U8(63), w.t)
	ANDQ(U32(0x87), w.t)
	ADDQ(w.lo, w.lo)
	ADCQ(w.hi, w.hi)
	XORQ(w.t, w.lo)
}

// perRound spreads the next iteration's tweak computation evenly over the
// 32 rounds.
func (w *xtsTweaks) perRound(r int) {
	for k := (r*w.blocks + 31) / 32; k < ((r+1)*w.blocks+31)/32; k++ {
		w.step(k)
	}
}

// endRun ends an iteration: the next buffer becomes the current one.
func (w *xtsTweaks) endRun() {
	w.nextSector()
	XCHGQ(w.cur, w.nxt)
}
