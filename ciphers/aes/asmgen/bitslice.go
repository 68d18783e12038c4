//go:build ignore

// The "sse2-bitsliced" kernels: constant-time AES for amd64 CPUs without
// AES-NI, eight blocks per pass in eight 128-bit bit planes (plane i holds
// bit i of every byte of the eight blocks), the same fixsliced rounds as
// the portable Go code (bitslice_round.go) on twice the width. Only SSE2.
//
// Layout: in every plane, byte 4r+c holds state byte (row r, column c) of
// the eight blocks, bit b of it block b. Rows are 32-bit lanes, so
// MixColumns reaches the next row with one PSHUFD, and a rotation of the
// columns inside every row is a 32-bit rotation (PSHUFLW+PSHUFHW for two
// columns).
//
// The rounds are written as a straight-line program on values (prog), then
// register-allocated onto the 16 xmm registers of two-operand SSE2: an
// operation works in place on an operand that dies at it and copies
// otherwise; when more than 16 values are live (inside the S-box circuit)
// the one used farthest ahead is spilled to an aligned stack slot, from
// which it can serve directly as a memory operand. Before emitting, the
// program is run by an interpreter against crypto/aes (checkSSE2Program),
// so a layout mistake stops the generator instead of reaching the tests.
package main

import (
	"bytes"
	stdaes "crypto/aes"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"sort"
	"strings"
)

// ---------------------------------------------------------------- IR

// mref is a 16-byte memory operand: disp(base).
type mref struct {
	base string
	disp int
}

func (m mref) String() string {
	if m.disp == 0 {
		return "(" + m.base + ")"
	}
	return fmt.Sprintf("%d(%s)", m.disp, m.base)
}

type irop int

const (
	opLoad  irop = iota // v = [m], unaligned
	opStore             // [m] = a, unaligned
	opXor
	opAnd
	opOr
	opAndn // ^a & b
	opXorM // a ^ [m], aligned
	opAndM // a & [m], aligned
	opShufD
	opShufLW
	opShufHW
	opSrlD // 32-bit lanes
	opSllD
	opSrlQ // 64-bit lanes
	opSllQ
	opSrlB // whole register, bytes
	opSllB
)

type irins struct {
	op   irop
	a, b int
	imm  int
	m    mref
	v    int
}

// irexit leaves the program after `at` instructions when the asm in check
// does not jump to the skip label: the planes go to X0-X7 and control to
// label. check may be empty (an unconditional exit).
type irexit struct {
	at     int
	planes [8]int
	check  []string
	label  string
}

type prog struct {
	ins    []irins
	n      int
	inputs []int // values arriving in X0, X1, ...
	exits  []irexit
}

func (p *prog) add(o irop, a, b, imm int, m mref) int {
	v := -1
	if o != opStore {
		v = p.n
		p.n++
	}
	p.ins = append(p.ins, irins{o, a, b, imm, m, v})
	return v
}

func (p *prog) input() int {
	v := p.n
	p.n++
	p.inputs = append(p.inputs, v)
	return v
}

func (p *prog) load(m mref) int        { return p.add(opLoad, -1, -1, 0, m) }
func (p *prog) store(a int, m mref)    { p.add(opStore, a, -1, 0, m) }
func (p *prog) xor(a, b int) int       { return p.add(opXor, a, b, 0, mref{}) }
func (p *prog) and(a, b int) int       { return p.add(opAnd, a, b, 0, mref{}) }
func (p *prog) or(a, b int) int        { return p.add(opOr, a, b, 0, mref{}) }
func (p *prog) andn(a, b int) int      { return p.add(opAndn, a, b, 0, mref{}) }
func (p *prog) xorM(a int, m mref) int { return p.add(opXorM, a, -1, 0, m) }
func (p *prog) andM(a int, m mref) int { return p.add(opAndM, a, -1, 0, m) }
func (p *prog) un(o irop, imm, a int) int {
	return p.add(o, a, -1, imm, mref{})
}

// ---------------------------------------------------------------- constants

// The kernel's aligned stack area (base R13): constants, the eight XTS
// tweaks of the current run, then spill slots.
const (
	offOnes   = 0
	offByte1  = 16 // byte transpose, bytes {1,3,9,11}
	offByte2  = 32 // byte transpose, bytes {2,3,6,7}
	offBit1   = 48 // 0x55...
	offBit2   = 64 // 0x33...
	offBit4   = 80 // 0x0f...
	offRows13 = 96 // 32-bit lanes 1 and 3
	offTweaks = 128
	offSlots  = 256
)

func constBytes() map[int][16]byte {
	var ones, b1, b2, m1, m2, m4, rows [16]byte
	for i := range ones {
		ones[i], m1[i], m2[i], m4[i] = 0xff, 0x55, 0x33, 0x0f
	}
	for _, i := range []int{1, 3, 9, 11} {
		b1[i] = 0xff
	}
	for _, i := range []int{2, 3, 6, 7} {
		b2[i] = 0xff
	}
	for i := 4; i < 8; i++ {
		rows[i], rows[i+8] = 0xff, 0xff
	}
	return map[int][16]byte{offOnes: ones, offByte1: b1, offByte2: b2, offBit1: m1, offBit2: m2, offBit4: m4, offRows13: rows}
}

func stack(off int) mref { return mref{"R13", off} }

// ---------------------------------------------------------------- AES as IR

type planes [8]int

// swapBytes exchanges the bytes selected by mask with those d bytes above.
func (p *prog) swapBytes(x, d int, mask mref) int {
	t := p.un(opSrlB, d, x)
	t = p.xor(t, x)
	t = p.andM(t, mask)
	x = p.xor(x, t)
	return p.xor(x, p.un(opSllB, d, t))
}

// exchange is bitslice_layout.go's: swaps the bits of hi at positions in m
// with the bits of lo s positions above.
func (p *prog) exchange(lo, hi *int, s int, m mref) {
	t := p.un(opSrlQ, s, *lo)
	t = p.xor(t, *hi)
	t = p.andM(t, m)
	*hi = p.xor(*hi, t)
	*lo = p.xor(*lo, p.un(opSllQ, s, t))
}

var bitLevels = []struct {
	s   int
	off int
}{{1, offBit1}, {2, offBit2}, {4, offBit4}}

// bytesToRows moves byte 4c+r of a block (FIPS-197 order) to 4r+c: swap
// bits 0,2 and 1,3 of the byte index. Its own inverse.
func (p *prog) bytesToRows(x int) int {
	x = p.swapBytes(x, 3, stack(offByte1))
	return p.swapBytes(x, 6, stack(offByte2))
}

// pack loads eight blocks, XORs each with its tweak and returns the planes:
// the 8x8 bit matrix of every byte position across the eight registers is
// transposed, so register i ends up with bit i of every byte, block b in
// bit b.
func (p *prog) pack() planes {
	var r planes
	for b := range r {
		r[b] = p.xorM(p.load(mref{"SI", 16 * b}), stack(offTweaks+16*b))
		r[b] = p.bytesToRows(r[b])
	}
	for _, l := range bitLevels {
		for u := 0; u < 8; u++ {
			if u&l.s == 0 {
				p.exchange(&r[u], &r[u+l.s], l.s, stack(l.off))
			}
		}
	}
	return r
}

func (p *prog) unpack(q planes) {
	r := q
	for li := len(bitLevels) - 1; li >= 0; li-- {
		l := bitLevels[li]
		for u := 7; u >= 0; u-- {
			if u&l.s == 0 {
				p.exchange(&r[u], &r[u+l.s], l.s, stack(l.off))
			}
		}
	}
	for b := range r {
		x := p.bytesToRows(r[b])
		x = p.xorM(x, stack(offTweaks+16*b))
		p.store(x, mref{"DI", 16 * b})
	}
}

func (p *prog) addKey(q planes, base string, disp int) planes {
	for i := range q {
		q[i] = p.xorM(q[i], mref{base, disp + 16*i})
	}
	return q
}

func (p *prog) not(a int) int { return p.xorM(a, stack(offOnes)) }

// rotRow: row r+1 into row r (32-bit lane i from lane i+1); rotRow2: r+2.
func (p *prog) rotRow(x int) int  { return p.un(opShufD, 0x39, x) }
func (p *prog) rotRow2(x int) int { return p.un(opShufD, 0x4e, x) }

// colRot moves column c+m of every row into column c: a right rotation of
// every 32-bit lane by 8m bits.
func (p *prog) colRot(x, m int) int {
	switch m & 3 {
	case 0:
		return x
	case 2:
		return p.un(opShufHW, 0xb1, p.un(opShufLW, 0xb1, x))
	}
	n := 8 * (m & 3)
	return p.or(p.un(opSrlD, n, x), p.un(opSllD, 32-n, x))
}

// mixColumnsAt is bitslice_round.go's mixColumnsAt; key (the round key's
// planes at disp(base)) is skipped when base is "".
func (p *prog) mixColumnsAt(q planes, k int, base string, disp int) planes {
	var r, t, u planes
	for i := range q {
		r[i] = p.colRot(p.rotRow(q[i]), k)
		t[i] = p.xor(q[i], r[i])
		if k&1 == 0 {
			u[i] = p.rotRow2(t[i])
		} else {
			u[i] = p.colRot(p.rotRow2(t[i]), 2)
		}
	}
	// Extra terms from the doubling: plane i of 2t is t[i-1], and t[7]
	// folds into planes 0, 1, 3 and 4.
	var out planes
	for i := range q {
		x := p.xor(r[i], u[i])
		if i > 0 {
			x = p.xor(x, t[i-1])
		}
		if i == 0 || i == 1 || i == 3 || i == 4 {
			x = p.xor(x, t[7])
		}
		if base != "" {
			x = p.xorM(x, mref{base, disp + 16*i})
		}
		out[i] = x
	}
	return out
}

// invMixColumnsAt is bitslice_round.go's: AddRoundKey, u = a ^ 4(a ^
// a_(r+2)), then MixColumns.
func (p *prog) invMixColumnsAt(q planes, k int, base string, disp int) planes {
	q = p.addKey(q, base, disp)
	var v planes
	for i := range q {
		w := p.rotRow2(q[i])
		if k&1 == 1 {
			w = p.colRot(w, 2)
		}
		v[i] = p.xor(q[i], w)
	}
	add := [8][]int{{6}, {6, 7}, {0, 7}, {1, 6}, {2, 6, 7}, {3, 7}, {4}, {5}}
	for i := range q {
		for _, j := range add[i] {
			q[i] = p.xor(q[i], v[j])
		}
	}
	return p.mixColumnsAt(q, k, "", 0)
}

// invAffine is bitslice_sbox.go's.
func (p *prog) invAffine(q planes) planes {
	x3 := func(a, b, c int) int { return p.xor(p.xor(q[a], q[b]), q[c]) }
	var o planes
	o[0] = p.not(x3(2, 5, 7))
	o[1] = x3(3, 6, 0)
	o[2] = p.not(x3(4, 7, 1))
	o[3] = x3(5, 0, 2)
	o[4] = x3(6, 1, 3)
	o[5] = x3(7, 2, 4)
	o[6] = x3(0, 3, 5)
	o[7] = x3(1, 4, 6)
	return o
}

// sboxLines is the straight-line program of subBytes in bitslice_sbox.go.
var sboxLines = func() [][4]string {
	src, err := os.ReadFile("bitslice_sbox.go")
	must(err)
	s := string(src)
	start := strings.Index(s, "func subBytes(q *state) {")
	end := strings.Index(s[start:], "\n}\n")
	re := regexp.MustCompile(`^(\w+) := (\^\()?(\w+) ([&^|]) (\w+)\)?$`)
	var out [][4]string
	for _, line := range strings.Split(s[start:start+end], "\n") {
		line = strings.TrimSpace(line)
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		op := m[4]
		if m[2] != "" {
			op = "xnor"
		}
		out = append(out, [4]string{m[1], m[3], op, m[5]})
	}
	if len(out) < 100 {
		panic(fmt.Sprintf("parsed only %d S-box gates from bitslice_sbox.go", len(out)))
	}
	return out
}()

// subBytes runs the Boyar-Peralta circuit: x0 is the most significant bit.
func (p *prog) subBytes(q planes) planes {
	env := map[string]int{}
	for i := 0; i < 8; i++ {
		env[fmt.Sprintf("x%d", i)] = q[7-i]
	}
	for _, g := range sboxLines {
		a, ok1 := env[g[1]]
		b, ok2 := env[g[3]]
		if !ok1 || !ok2 {
			panic("S-box: undefined operand in " + strings.Join(g[:], " "))
		}
		var v int
		switch g[2] {
		case "^":
			v = p.xor(a, b)
		case "&":
			v = p.and(a, b)
		case "|":
			v = p.or(a, b)
		case "xnor":
			v = p.not(p.xor(a, b))
		}
		env[g[0]] = v
	}
	var o planes
	for i := 0; i < 8; i++ {
		o[7-i] = env[fmt.Sprintf("s%d", i)]
	}
	return o
}

func (p *prog) invSubBytes(q planes) planes {
	return p.invAffine(p.subBytes(p.invAffine(q)))
}

// shiftRowsK is ShiftRows applied K times (K = 0 or 2 here): row r rotates
// by 2r columns, i.e. rows 1 and 3 by two.
func (p *prog) shiftRowsK(q planes, k int) planes {
	switch k {
	case 0:
		return q
	case 2:
		for i, x := range q {
			d := p.xor(x, p.colRot(x, 2))
			d = p.andM(d, stack(offRows13))
			q[i] = p.xor(x, d)
		}
		return q
	}
	panic("shiftRowsK")
}

// sse2Programs builds the main program (pack, round key 0, the 13 middle
// rounds, exits after rounds 9 and 11 for 10 and 12 rounds) and the final
// rounds with K = nr mod 4 (enc) or -nr mod 4 (dec) ShiftRows left to do:
// 2 for 10 and 14 rounds, 0 for 12. Keys: round j's planes at 128j(AX),
// the last one at (R8).
func sse2Programs(dec bool) (main *prog, final2, final0 *prog) {
	main = &prog{}
	q := main.pack()
	q = main.addKey(q, "AX", 0)
	for j := 1; j <= 13; j++ {
		if dec {
			q = main.invMixColumnsAt(main.invSubBytes(q), (-j)&3, "AX", 128*j)
		} else {
			q = main.mixColumnsAt(main.subBytes(q), j&3, "AX", 128*j)
		}
		switch j {
		case 9:
			main.exits = append(main.exits, irexit{len(main.ins), q, []string{"CMPQ R14, $10"}, "final2"})
		case 11:
			main.exits = append(main.exits, irexit{len(main.ins), q, []string{"CMPQ R14, $12"}, "final0"})
		case 13:
			main.exits = append(main.exits, irexit{len(main.ins), q, nil, "final2"})
		}
	}
	mk := func(k int) *prog {
		f := &prog{}
		var q planes
		for i := range q {
			q[i] = f.input()
		}
		if dec {
			q = f.invSubBytes(q)
		} else {
			q = f.subBytes(q)
		}
		q = f.addKey(q, "R8", 0)
		f.unpack(f.shiftRowsK(q, k))
		return f
	}
	return main, mk(2), mk(0)
}

// ---------------------------------------------------------------- interpreter

type vec [16]byte

func (v vec) lanes32() (l [4]uint32) {
	for i := range l {
		l[i] = uint32(v[4*i]) | uint32(v[4*i+1])<<8 | uint32(v[4*i+2])<<16 | uint32(v[4*i+3])<<24
	}
	return
}

func fromLanes32(l [4]uint32) (v vec) {
	for i, x := range l {
		v[4*i], v[4*i+1], v[4*i+2], v[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	return
}

func (v vec) words() (w [8]uint16) {
	for i := range w {
		w[i] = uint16(v[2*i]) | uint16(v[2*i+1])<<8
	}
	return
}

func fromWords(w [8]uint16) (v vec) {
	for i, x := range w {
		v[2*i], v[2*i+1] = byte(x), byte(x>>8)
	}
	return
}

// run interprets p up to instruction `stop` with the given inputs and
// memory, and returns every value.
func (p *prog) run(in []vec, mem map[mref]*vec, stop int) []vec {
	val := make([]vec, p.n)
	for i, v := range p.inputs {
		val[v] = in[i]
	}
	get := func(m mref) vec {
		x, ok := mem[m]
		if !ok {
			panic("interpreter: no memory at " + m.String())
		}
		return *x
	}
	for _, x := range p.ins[:stop] {
		a, b := vec{}, vec{}
		if x.a >= 0 {
			a = val[x.a]
		}
		if x.b >= 0 {
			b = val[x.b]
		}
		var r vec
		switch x.op {
		case opLoad:
			r = get(x.m)
		case opStore:
			v := a
			mem[x.m] = &v
			continue
		case opXorM, opAndM:
			b = get(x.m)
			fallthrough
		case opXor, opAnd, opOr, opAndn:
			for i := range r {
				switch x.op {
				case opXor, opXorM:
					r[i] = a[i] ^ b[i]
				case opAnd, opAndM:
					r[i] = a[i] & b[i]
				case opOr:
					r[i] = a[i] | b[i]
				case opAndn:
					r[i] = ^a[i] & b[i]
				}
			}
		case opShufD:
			l, o := a.lanes32(), [4]uint32{}
			for i := range o {
				o[i] = l[x.imm>>(2*i)&3]
			}
			r = fromLanes32(o)
		case opShufLW, opShufHW:
			w := a.words()
			o := w
			base := 0
			if x.op == opShufHW {
				base = 4
			}
			for i := 0; i < 4; i++ {
				o[base+i] = w[base+(x.imm>>(2*i)&3)]
			}
			r = fromWords(o)
		case opSrlD, opSllD:
			l := a.lanes32()
			for i := range l {
				if x.op == opSrlD {
					l[i] >>= x.imm
				} else {
					l[i] <<= x.imm
				}
			}
			r = fromLanes32(l)
		case opSrlQ, opSllQ:
			for h := 0; h < 2; h++ {
				var q uint64
				for i := 7; i >= 0; i-- {
					q = q<<8 | uint64(a[8*h+i])
				}
				if x.op == opSrlQ {
					q >>= x.imm
				} else {
					q <<= x.imm
				}
				for i := 0; i < 8; i++ {
					r[8*h+i] = byte(q >> (8 * i))
				}
			}
		case opSrlB:
			for i := 0; i+x.imm < 16; i++ {
				r[i] = a[i+x.imm]
			}
		case opSllB:
			for i := x.imm; i < 16; i++ {
				r[i] = a[i-x.imm]
			}
		}
		val[x.v] = r
	}
	return val
}

// ---------------------------------------------------------------- key planes

// keyPlanes128 is the kernels' key format (the package builds it in
// bitslice128_amd64.go): round key bytes k (FIPS-197 order) at
// column offset off, plane i byte 4r+c all ones where bit i of the key
// byte of row r, column c-off*r is set.
func keyPlanes128(k []byte, off int) [128]byte {
	var out [128]byte
	for r := 0; r < 4; r++ {
		for c := 0; c < 4; c++ {
			b := k[4*c+r]
			slot := 4*r + (c+off*r)&3
			for i := 0; i < 8; i++ {
				if b>>i&1 == 1 {
					out[16*i+slot] = 0xff
				}
			}
		}
	}
	return out
}

// expandKeyFIPS is FIPS-197's key expansion, for the check only.
func expandKeyFIPS(key []byte) ([][]byte, int) {
	nk := len(key) / 4
	nr := nk + 6
	w := make([]byte, 16*(nr+1))
	copy(w, key)
	sbox := func(b byte) byte { return sboxTable[b] }
	rcon := byte(1)
	for i := nk; i < 4*(nr+1); i++ {
		t := [4]byte{w[4*i-4], w[4*i-3], w[4*i-2], w[4*i-1]}
		if i%nk == 0 {
			t = [4]byte{sbox(t[1]) ^ rcon, sbox(t[2]), sbox(t[3]), sbox(t[0])}
			rcon = rcon<<1 ^ (rcon>>7)*0x1b
		} else if nk > 6 && i%nk == 4 {
			t = [4]byte{sbox(t[0]), sbox(t[1]), sbox(t[2]), sbox(t[3])}
		}
		for j := 0; j < 4; j++ {
			w[4*i+j] = w[4*(i-nk)+j] ^ t[j]
		}
	}
	out := make([][]byte, nr+1)
	for r := range out {
		out[r] = w[16*r : 16*r+16]
	}
	return out, nr
}

// sboxTable is computed from the definition (inverse in GF(2^8), affine).
var sboxTable = func() (t [256]byte) {
	mul := func(a, b byte) byte {
		var p byte
		for b != 0 {
			if b&1 != 0 {
				p ^= a
			}
			a = a<<1 ^ (a>>7)*0x1b
			b >>= 1
		}
		return p
	}
	for x := 0; x < 256; x++ {
		inv := byte(0)
		for y := 1; y < 256; y++ {
			if mul(byte(x), byte(y)) == 1 {
				inv = byte(y)
			}
		}
		s := inv
		for i := 1; i <= 4; i++ {
			s ^= inv<<i | inv>>(8-i)
		}
		t[x] = s ^ 0x63
	}
	return
}()

// checkSSE2Program interprets the programs for every key size and both
// directions on random keys, blocks and tweaks and compares with
// crypto/aes (XTS-style masking with the tweak buffer).
func checkSSE2Program(dec bool) {
	main, f2, f0 := sse2Programs(dec)
	rnd := rand.New(rand.NewSource(1))
	for _, ks := range []int{16, 24, 32} {
		key := make([]byte, ks)
		rnd.Read(key)
		rks, nr := expandKeyFIPS(key)
		ref, _ := stdaes.NewCipher(key)
		mem := map[mref]*vec{}
		for off, c := range constBytes() {
			c := vec(c)
			mem[stack(off)] = &c
		}
		var src, tw [8]vec
		for b := 0; b < 8; b++ {
			rnd.Read(src[b][:])
			rnd.Read(tw[b][:])
			s, t := src[b], tw[b]
			mem[mref{"SI", 16 * b}] = &s
			mem[stack(offTweaks+16*b)] = &t
		}
		for j := 0; j <= nr; j++ {
			var kp [128]byte
			if dec {
				kp = keyPlanes128(rks[nr-j], (-j)&3)
			} else {
				kp = keyPlanes128(rks[j], j&3)
			}
			for i := 0; i < 8; i++ {
				v := vec(kp[16*i : 16*i+16])
				mem[mref{"AX", 128*j + 16*i}] = &v
				if j == nr {
					mem[mref{"R8", 16 * i}] = &v
				}
			}
		}
		var ex irexit
		for _, e := range main.exits {
			if (nr == 10 && len(e.check) > 0 && strings.Contains(e.check[0], "$10")) ||
				(nr == 12 && len(e.check) > 0 && strings.Contains(e.check[0], "$12")) ||
				(nr == 14 && len(e.check) == 0) {
				ex = e
			}
		}
		vals := main.run(nil, mem, ex.at)
		var in []vec
		for _, v := range ex.planes {
			in = append(in, vals[v])
		}
		f := f2
		if ex.label == "final0" {
			f = f0
		}
		f.run(in, mem, len(f.ins))
		for b := 0; b < 8; b++ {
			var want, x vec
			for i := range x {
				x[i] = src[b][i] ^ tw[b][i]
			}
			if dec {
				ref.Decrypt(want[:], x[:])
			} else {
				ref.Encrypt(want[:], x[:])
			}
			for i := range want {
				want[i] ^= tw[b][i]
			}
			got, ok := mem[mref{"DI", 16 * b}]
			if !ok || !bytes.Equal(got[:], want[:]) {
				panic(fmt.Sprintf("sse2 program (dec=%v, %d rounds): block %d = %x, want %x", dec, nr, b, got, want))
			}
		}
	}
}

// ---------------------------------------------------------------- allocation

// ra allocates the 16 xmm registers for one program and emits its code.
type ra struct {
	g      *gen
	p      *prog
	reg    [16]int     // value held, or -1
	inReg  map[int]int // value -> register
	slot   map[int]int // value -> spill slot (its copy there is valid)
	free   []int       // free slots
	nslots *int        // high-water mark over the kernel's programs
	uses   [][]int     // positions of each value's uses, ascending
	used   int         // slots this program has used
}

func newRA(g *gen, p *prog, nslots *int) *ra {
	a := &ra{g: g, p: p, inReg: map[int]int{}, slot: map[int]int{}, nslots: nslots}
	for i := range a.reg {
		a.reg[i] = -1
	}
	a.uses = make([][]int, p.n)
	use := func(v, at int) {
		if v >= 0 {
			a.uses[v] = append(a.uses[v], at)
		}
	}
	ei := 0
	for i, x := range p.ins {
		for ei < len(p.exits) && p.exits[ei].at == i {
			for _, v := range p.exits[ei].planes {
				use(v, i)
			}
			ei++
		}
		use(x.a, i)
		if x.b != x.a {
			use(x.b, i)
		}
	}
	for ; ei < len(p.exits); ei++ {
		for _, v := range p.exits[ei].planes {
			use(v, len(p.ins))
		}
	}
	for i, v := range p.inputs {
		a.reg[i] = v
		a.inReg[v] = i
	}
	return a
}

// next returns the position of v's next use at or after i (a large number
// if none).
func (a *ra) next(v, i int) int {
	u := a.uses[v]
	if k := sort.SearchInts(u, i); k < len(u) {
		return u[k]
	}
	return 1 << 30
}

// dies reports whether instruction i is v's last use.
func (a *ra) dies(v, i int) bool { return a.next(v, i+1) == 1<<30 }

func (a *ra) slotMem(s int) string { return stack(offSlots + 16*s).String() }

// operand returns v's location as an instruction operand.
func (a *ra) operand(v int) string {
	if r, ok := a.inReg[v]; ok {
		return fmt.Sprintf("X%d", r)
	}
	if s, ok := a.slot[v]; ok {
		return a.slotMem(s)
	}
	panic(fmt.Sprintf("value %d has no location", v))
}

// take returns a free register, spilling the value used farthest ahead
// (not one in keep) when none is free.
func (a *ra) take(i int, keep ...int) int {
	for r, v := range a.reg {
		if v < 0 {
			return r
		}
	}
	best, bestNext := -1, -1
	for r, v := range a.reg {
		skip := false
		for _, k := range keep {
			if v == k {
				skip = true
			}
		}
		if skip {
			continue
		}
		n := a.next(v, i)
		if _, clean := a.slot[v]; clean {
			n += 8 // prefer values already in memory
		}
		if n > bestNext {
			best, bestNext = r, n
		}
	}
	v := a.reg[best]
	if _, ok := a.slot[v]; !ok {
		var s int
		if len(a.free) > 0 {
			s, a.free = a.free[len(a.free)-1], a.free[:len(a.free)-1]
		} else {
			s = a.used
			a.used++
			*a.nslots = max(*a.nslots, a.used)
		}
		a.slot[v] = s
		a.g.l("MOVO X%d, %s", best, a.slotMem(s))
	}
	delete(a.inReg, v)
	a.reg[best] = -1
	return best
}

// release frees the locations of values that are dead after i.
func (a *ra) release(i int, vs ...int) {
	for _, v := range vs {
		if v < 0 || !a.dies(v, i) {
			continue
		}
		if r, ok := a.inReg[v]; ok && a.reg[r] == v {
			a.reg[r] = -1
			delete(a.inReg, v)
		}
		if s, ok := a.slot[v]; ok {
			a.free = append(a.free, s)
			delete(a.slot, v)
		}
	}
}

func (a *ra) bind(v, r int) {
	if old := a.reg[r]; old >= 0 && a.inReg[old] == r {
		delete(a.inReg, old)
	}
	a.reg[r] = v
	a.inReg[v] = r
}

// dest returns a register that holds a copy of v and may be overwritten
// (v's own register when v dies at i).
func (a *ra) dest(v, i int, keep ...int) int {
	if r, ok := a.inReg[v]; ok && a.dies(v, i) {
		return r
	}
	r := a.take(i, append(keep, v)...)
	a.g.l("MOVO %s, X%d", a.operand(v), r)
	return r
}

var mnemonic = map[irop]string{
	opXor: "PXOR", opAnd: "PAND", opOr: "POR", opAndn: "PANDN", opXorM: "PXOR", opAndM: "PAND",
	opShufD: "PSHUFD", opShufLW: "PSHUFLW", opShufHW: "PSHUFHW",
	opSrlD: "PSRLL", opSllD: "PSLLL", opSrlQ: "PSRLQ", opSllQ: "PSLLQ", opSrlB: "PSRLO", opSllB: "PSLLO",
}

// exitTo emits the exit: unless check's comparison says otherwise, put the
// planes in X0-X7 and jump. The allocator's state is left as it was: the
// moves run only on the way out.
func (a *ra) exitTo(e irexit, n int) {
	skip := fmt.Sprintf("%s_skip%d", e.label, n)
	if len(e.check) > 0 {
		for _, l := range e.check {
			a.g.l("%s", l)
		}
		a.g.l("JNE  %s", skip)
	}
	loc := map[int]string{} // pending: target register -> source operand
	for t, v := range e.planes {
		if r, ok := a.inReg[v]; ok && r == t {
			continue
		}
		loc[t] = a.operand(v)
	}
	isSrc := func(reg string) bool {
		for _, s := range loc {
			if s == reg {
				return true
			}
		}
		return false
	}
	for len(loc) > 0 {
		progress := false
		for t := 0; t < 8; t++ {
			s, ok := loc[t]
			if !ok {
				continue
			}
			delete(loc, t)
			if isSrc(fmt.Sprintf("X%d", t)) {
				loc[t] = s
				continue
			}
			a.g.l("MOVO %s, X%d", s, t)
			progress = true
		}
		if progress {
			continue
		}
		// A cycle among X0-X7: park one target's content in a register
		// that is no pending source (on the way out nothing else is live).
		tmp := -1
		for r := 15; r >= 8; r-- {
			if !isSrc(fmt.Sprintf("X%d", r)) {
				tmp = r
				break
			}
		}
		t := 0
		for loc[t] == "" {
			t++
		}
		old := fmt.Sprintf("X%d", t)
		a.g.l("MOVO %s, X%d", old, tmp)
		for k, s := range loc {
			if s == old {
				loc[k] = fmt.Sprintf("X%d", tmp)
			}
		}
	}
	a.g.l("JMP  %s", e.label)
	if len(e.check) > 0 {
		a.g.l("%s:", skip)
	}
}

func (a *ra) emit() {
	p := a.p
	ei := 0
	for i, x := range p.ins {
		for ei < len(p.exits) && p.exits[ei].at == i {
			a.exitTo(p.exits[ei], ei)
			ei++
		}
		switch x.op {
		case opLoad:
			r := a.take(i)
			a.g.l("MOVOU %s, X%d", x.m, r)
			a.bind(x.v, r)
		case opStore:
			if _, ok := a.inReg[x.a]; !ok {
				r := a.take(i)
				a.g.l("MOVO %s, X%d", a.operand(x.a), r)
				a.bind(x.a, r)
			}
			a.g.l("MOVOU %s, %s", a.operand(x.a), x.m)
			a.release(i, x.a)
		case opXor, opAnd, opOr, opAndn:
			av, bv := x.a, x.b
			if x.op != opAndn {
				_, aReg := a.inReg[av]
				_, bReg := a.inReg[bv]
				// Work in place on an operand that dies; prefer the one in
				// a register.
				aIn := aReg && a.dies(av, i)
				bIn := bReg && a.dies(bv, i)
				if !aIn && bIn {
					av, bv = bv, av
				}
			}
			r := a.dest(av, i, bv)
			src := a.operand(bv)
			a.g.l("%s %s, X%d", mnemonic[x.op], src, r)
			a.release(i, x.a, x.b)
			a.bind(x.v, r)
		case opXorM, opAndM, opSrlD, opSllD, opSrlQ, opSllQ, opSrlB, opSllB:
			r := a.dest(x.a, i)
			if x.op == opXorM || x.op == opAndM {
				a.g.l("%s %s, X%d", mnemonic[x.op], x.m, r)
			} else {
				a.g.l("%s $%d, X%d", mnemonic[x.op], x.imm, r)
			}
			a.release(i, x.a)
			a.bind(x.v, r)
		case opShufD, opShufLW, opShufHW:
			var r int
			if rr, ok := a.inReg[x.a]; ok && a.dies(x.a, i) {
				r = rr
			} else {
				r = a.take(i, x.a)
			}
			a.g.l("%s $0x%02x, %s, X%d", mnemonic[x.op], x.imm, a.operand(x.a), r)
			a.release(i, x.a)
			a.bind(x.v, r)
		}
	}
	for ; ei < len(p.exits); ei++ {
		a.exitTo(p.exits[ei], ei)
	}
}

// ---------------------------------------------------------------- kernels

// sse2Bitsliced emits encryptBlocksSSE2 and decryptBlocksSSE2:
//
//	func xcryptBlocksSSE2(nr int, keys *byte, dst, src *byte, n int, tweaks *byte, per int)
//
// n runs of 8 blocks. keys: 16-byte aligned, nr+1 round keys of 128 bytes
// (eight planes) in the order the rounds use them. tweaks == nil is ECB;
// otherwise XTS with per runs per sector and tweaks[16s:] the initial
// tweak of sector s.
func sse2Bitsliced(g *gen, dec bool) {
	checkSSE2Program(dec)
	name := "encrypt"
	if dec {
		name = "decrypt"
	}
	main, f2, f0 := sse2Programs(dec)
	var body gen
	nslots := 0
	body.l("loop:")
	body.l("TESTQ BX, BX")
	body.l("JZ   gen_done")
	for b := 0; b < 8; b++ {
		body.l("MOVQ R10, %d(R13)", offTweaks+16*b)
		body.l("MOVQ R11, %d(R13)", offTweaks+16*b+8)
		body.l("MOVQ R11, R12")
		body.l("SARQ $63, R12")
		body.l("ANDQ $0x87, R12")
		body.l("ADDQ R10, R10")
		body.l("ADCQ R11, R11")
		body.l("XORQ R12, R10")
	}
	body.l("DECQ DX")
	body.l("JNZ  gen_done")
	body.l("MOVQ R9, DX")
	body.l("CMPQ CX, $1")
	body.l("JEQ  gen_done")
	body.l("MOVQ (BX), R10")
	body.l("MOVQ 8(BX), R11")
	body.l("ADDQ $16, BX")
	body.l("gen_done:")
	newRA(&body, main, &nslots).emit()
	body.l("final2:")
	newRA(&body, f2, &nslots).emit()
	body.l("JMP  next")
	body.l("final0:")
	newRA(&body, f0, &nslots).emit()
	body.l("next:")
	body.l("ADDQ $128, SI")
	body.l("ADDQ $128, DI")
	body.l("DECQ CX")
	body.l("JNZ  loop")
	body.l("// Spill slots and tweaks hold key-dependent state: wipe them.")
	body.l("PXOR X0, X0")
	for off := offTweaks; off < offSlots+16*nslots; off += 16 {
		body.l("MOVO X0, %d(R13)", off)
	}
	body.l("ret:")
	body.l("RET")

	frame := offSlots + 16*nslots + 16
	g.l("// func %sBlocksSSE2(nr int, keys *byte, dst, src *byte, n int, tweaks *byte, per int)", name)
	g.l("//")
	g.l("// Bitsliced AES on n runs of 8 blocks with SSE2 only (asmgen/bitslice.go).")
	g.l("// R13: the aligned stack area (constants, tweaks, %d spill slots).", nslots)
	g.l("TEXT ·%sBlocksSSE2(SB), 0, $%d-56", name, frame)
	g.l("MOVQ nr+0(FP), R14")
	g.l("MOVQ keys+8(FP), AX")
	g.l("MOVQ dst+16(FP), DI")
	g.l("MOVQ src+24(FP), SI")
	g.l("MOVQ n+32(FP), CX")
	g.l("MOVQ tweaks+40(FP), BX")
	g.l("MOVQ per+48(FP), R9")
	g.l("TESTQ CX, CX")
	g.l("JZ   ret")
	g.l("LEAQ 15(SP), R13")
	g.l("ANDQ $-16, R13")
	g.l("MOVQ R14, R8")
	g.l("SHLQ $7, R8")
	g.l("ADDQ AX, R8")
	consts := constBytes()
	for off := 0; off < offTweaks; off += 16 {
		c, ok := consts[off]
		if !ok {
			continue
		}
		for h := 0; h < 2; h++ {
			var q uint64
			for i := 7; i >= 0; i-- {
				q = q<<8 | uint64(c[8*h+i])
			}
			g.l("MOVQ $0x%016x, R12", q)
			g.l("MOVQ R12, %d(R13)", off+8*h)
		}
	}
	g.l("PXOR X0, X0")
	for b := 0; b < 8; b++ {
		g.l("MOVO X0, %d(R13)", offTweaks+16*b)
	}
	g.l("MOVQ R9, DX")
	g.l("TESTQ BX, BX")
	g.l("JZ   loop")
	g.l("MOVQ (BX), R10")
	g.l("MOVQ 8(BX), R11")
	g.l("ADDQ $16, BX")
	g.b.Write(body.b.Bytes())
	g.l("")
}
