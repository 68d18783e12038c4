//go:build ignore

// gen_avx512 writes avx512_amd64.s, the AVX-512 Twofish kernel. Run with
// `go generate`.
//
// Blocks go in groups of sixteen, one 32-bit word of every block per ZMM
// register (a 4x4 transpose inside each 128-bit lane turns four loaded
// registers of four blocks each into the words A, B, C, D). Two groups are
// interleaved so that one group's work fills the latency of the other's.
//
// XTS is fused: the tweaks of a run are computed with vector shifts (no
// per-block scalar work), XORed in before the transpose and after the
// transpose back, and never leave the kernel's stack frame.
//
// The key-dependent S-boxes are the four plain byte permutations s_0..s_3
// (1 KiB) held in 16 ZMM registers. VPERMI2B looks up 128 entries at once,
// so each byte position takes two masked VPERMI2B (one per half table, the
// position selected by a constant byte mask), and VPMOVB2M/VPBLENDMB pick
// the half by the index's top bit.
//
// The MDS matrix has only the entries 01, 5B and EF, so the S-box output y
// is multiplied by 5B and EF with one GF2P8AFFINEQB each (multiplication by
// a constant in GF(2^8)/0x169 is GF(2)-linear, so it is an 8x8 bit matrix);
// five VPSHUFB then route the products to their output bytes and two
// three-way XORs sum them.
//
// g(ROL(B, 8)) is computed without rotating: the S-box of byte position p
// uses table (p+1) mod 4 and the MDS routing reads position (j+3) mod 4 for
// input byte j.
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
)

var out bytes.Buffer

func p(format string, args ...any)   { fmt.Fprintf(&out, "\t"+format+"\n", args...) }
func raw(format string, args ...any) { fmt.Fprintf(&out, format+"\n", args...) }

// MDS matrix and its field, as in gf.go.
var mds = [4][4]byte{
	{0x01, 0xEF, 0x5B, 0x5B},
	{0x5B, 0xEF, 0xEF, 0x01},
	{0xEF, 0x5B, 0x01, 0xEF},
	{0xEF, 0x01, 0xEF, 0x5B},
}

func gfMul(a, b byte) byte {
	var r uint
	x, y := uint(a), uint(b)
	for y != 0 {
		if y&1 != 0 {
			r ^= x
		}
		x <<= 1
		if x&0x100 != 0 {
			x ^= 0x169
		}
		y >>= 1
	}
	return byte(r)
}

// affineMatrix returns the GF2P8AFFINEQB operand for multiplication by c:
// byte 7-i of the qword is row i, whose bit j is bit i of c*x^j.
func affineMatrix(c byte) uint64 {
	var m uint64
	for i := 0; i < 8; i++ {
		var row byte
		for j := 0; j < 8; j++ {
			if gfMul(c, 1<<j)>>i&1 != 0 {
				row |= 1 << j
			}
		}
		m |= uint64(row) << (8 * (7 - i))
	}
	return m
}

// routes returns, for multiplier m, the (up to two) VPSHUFB patterns that
// move the product m*y_j to every output byte i with mds[i][j] == m, when
// input byte j sits at position pos(j) of each dword.
func routes(m byte, pos func(int) int) [][4]int {
	var pats [][4]int
	for i := 0; i < 4; i++ {
		n := 0
		for j := 0; j < 4; j++ {
			if mds[i][j] != m {
				continue
			}
			for len(pats) <= n {
				pats = append(pats, [4]int{-1, -1, -1, -1})
			}
			pats[n][i] = pos(j)
			n++
		}
	}
	return pats
}

// data emits one 64-byte constant.
func data(name string, b [64]byte) {
	for i := 0; i < 64; i += 8 {
		var q uint64
		for k := 7; k >= 0; k-- {
			q = q<<8 | uint64(b[i+k])
		}
		raw("DATA %s<>+%d(SB)/8, $0x%016x", name, i, q)
	}
	raw("GLOBL %s<>(SB), (NOPTR+RODATA), $64", name)
}

func pattern(name string, pat [4]int) {
	var b [64]byte
	// VPSHUFB indexes within each 128-bit lane; 0x80 writes a zero.
	for d := 0; d < 16; d++ {
		for i := 0; i < 4; i++ {
			if pat[i] < 0 {
				b[4*d+i] = 0x80
			} else {
				b[4*d+i] = byte(4*(d%4) + pat[i])
			}
		}
	}
	data(name, b)
}

func broadcast8(name string, q uint64) {
	var b [64]byte
	for i := 0; i < 64; i++ {
		b[i] = byte(q >> (8 * (i % 8)))
	}
	data(name, b)
}

// gfun names the constants of one g variant.
type gfun struct {
	name  string
	table [4]int // S-box table used at byte position p
	// VPSHUFB patterns for the 01, 5B and EF products.
	p01      string
	p5B, pEF []string
}

var g0, g1 gfun

func constants() {
	broadcast8("mul5B", affineMatrix(0x5B))
	broadcast8("mulEF", affineMatrix(0xEF))
	for gi, pos := range []func(int) int{
		func(j int) int { return j },
		func(j int) int { return (j + 3) % 4 },
	} {
		g := gfun{name: fmt.Sprint("g", gi)}
		for pp := 0; pp < 4; pp++ {
			for j := 0; j < 4; j++ {
				if pos(j) == pp {
					g.table[pp] = j
				}
			}
		}
		for _, m := range []byte{0x01, 0x5B, 0xEF} {
			for n, pat := range routes(m, pos) {
				name := fmt.Sprintf("%s_%02X_%d", g.name, m, n)
				pattern(name, pat)
				switch m {
				case 0x01:
					g.p01 = name
				case 0x5B:
					g.p5B = append(g.p5B, name)
				case 0xEF:
					g.pEF = append(g.pEF, name)
				}
			}
		}
		if len(g.p5B) != 2 || len(g.pEF) != 2 {
			log.Fatal("unexpected MDS routing")
		}
		if gi == 0 {
			g0 = g
		} else {
			g1 = g
		}
	}
}

// Register use inside the kernels:
//
//	Z16..Z31  S-box tables: table t, quarter q in Z(16+4t+q)
//	K1..K4    byte position masks, K7 positions 2 and 3
//	K5, K6    top bits of the g inputs
func tableReg(t, q int) string { return fmt.Sprintf("Z%d", 16+4*t+q) }

// sbox looks up the 64 bytes of x in the S-box tables of g into dst, using
// temps t[0..3] and mask register km. dst may be t[0].
func sbox(g gfun, x string, t [4]string, km string) {
	p("VPMOVB2M %s, %s", x, km)
	for _, r := range t {
		p("VMOVDQA64 %s, %s", x, r)
	}
	// t0: low half, positions 0,1   t1: low half, positions 2,3
	// t2: high half, positions 0,1  t3: high half, positions 2,3
	for pp := 0; pp < 4; pp++ {
		tab := g.table[pp]
		lo, hi := t[pp/2], t[2+pp/2]
		p("VPERMI2B %s, %s, K%d, %s", tableReg(tab, 1), tableReg(tab, 0), pp+1, lo)
		p("VPERMI2B %s, %s, K%d, %s", tableReg(tab, 3), tableReg(tab, 2), pp+1, hi)
	}
	p("VMOVDQU8 %s, K7, %s", t[1], t[0])
	p("VMOVDQU8 %s, K7, %s", t[3], t[2])
	p("VPBLENDMB %s, %s, %s, %s", t[2], t[0], km, t[0])
}

// mds multiplies the S-box output y (in place) by the MDS matrix, with
// temps u[0..3].
func mdsMul(g gfun, y string, u [4]string) {
	p("VGF2P8AFFINEQB $0, mul5B<>(SB), %s, %s", y, u[0])
	p("VGF2P8AFFINEQB $0, mulEF<>(SB), %s, %s", y, u[2])
	p("VPSHUFB %s<>(SB), %s, %s", g.p01, y, y)
	p("VPSHUFB %s<>(SB), %s, %s", g.p5B[1], u[0], u[1])
	p("VPSHUFB %s<>(SB), %s, %s", g.p5B[0], u[0], u[0])
	p("VPSHUFB %s<>(SB), %s, %s", g.pEF[1], u[2], u[3])
	p("VPSHUFB %s<>(SB), %s, %s", g.pEF[0], u[2], u[2])
	p("VPTERNLOGD $0x96, %s, %s, %s", u[1], u[0], y)
	p("VPTERNLOGD $0x96, %s, %s, %s", u[3], u[2], y)
}

// Register use: Z16..Z31 tables, Z0..Z7 the words of two batches
// (A, B, C, D of batch b in Z(4b)..Z(4b+3)), Z8..Z15 temporaries shared by
// the batches: the code of the two batches is interleaved in program order
// and register renaming lets the CPU overlap them.
const batches = 2

func state(b int) [4]string {
	return [4]string{fmt.Sprintf("Z%d", 4*b), fmt.Sprintf("Z%d", 4*b+1), fmt.Sprintf("Z%d", 4*b+2), fmt.Sprintf("Z%d", 4*b+3)}
}

// round emits round r for every batch: g of words x and y, then the
// update of words u and v with subkeys K[2r+8], K[2r+9] (BX points at the
// subkeys). Words are indexes into state(b).
func round(r int, x, y, u, v int, decrypt bool) {
	for b := 0; b < batches; b++ {
		w := state(b)
		sbox(g0, w[x], [4]string{"Z8", "Z9", "Z10", "Z11"}, "K5")
		mdsMul(g0, "Z8", [4]string{"Z9", "Z10", "Z11", "Z12"})
		sbox(g1, w[y], [4]string{"Z13", "Z9", "Z10", "Z11"}, "K6")
		mdsMul(g1, "Z13", [4]string{"Z9", "Z10", "Z11", "Z12"})
		t0, t1 := "Z8", "Z13"
		p("VPADDD %s, %s, %s", t1, t0, t0)
		p("VPADDD %s, %s, %s", t0, t1, t1)
		p("VPADDD.BCST %d(BX), %s, %s", 4*(2*r+8), t0, t0)
		p("VPADDD.BCST %d(BX), %s, %s", 4*(2*r+9), t1, t1)
		if !decrypt {
			p("VPXORD %s, %s, %s", t0, w[u], w[u])
			p("VPRORD $1, %s, %s", w[u], w[u])
			p("VPROLD $1, %s, %s", w[v], w[v])
			p("VPXORD %s, %s, %s", t1, w[v], w[v])
		} else {
			p("VPROLD $1, %s, %s", w[u], w[u])
			p("VPXORD %s, %s, %s", t0, w[u], w[u])
			p("VPXORD %s, %s, %s", t1, w[v], w[v])
			p("VPRORD $1, %s, %s", w[v], w[v])
		}
	}
}

// transpose swaps words and blocks inside each 128-bit lane of r[0..3]
// into o[0..3], with temps t.
func transpose(r, o, t [4]string) {
	p("VPUNPCKLDQ %s, %s, %s", r[1], r[0], t[0])
	p("VPUNPCKHDQ %s, %s, %s", r[1], r[0], t[1])
	p("VPUNPCKLDQ %s, %s, %s", r[3], r[2], t[2])
	p("VPUNPCKHDQ %s, %s, %s", r[3], r[2], t[3])
	p("VPUNPCKLQDQ %s, %s, %s", t[2], t[0], o[0])
	p("VPUNPCKHQDQ %s, %s, %s", t[2], t[0], o[1])
	p("VPUNPCKLQDQ %s, %s, %s", t[3], t[1], o[2])
	p("VPUNPCKHQDQ %s, %s, %s", t[3], t[1], o[3])
}

// setup loads the tables (AX) and the masks.
func setup() {
	for t := 0; t < 4; t++ {
		for q := 0; q < 4; q++ {
			p("VMOVDQU64 %d(AX), %s", 256*t+64*q, tableReg(t, q))
		}
	}
	for pp := 0; pp < 4; pp++ {
		p("MOVQ $0x%016x, R9", uint64(0x1111111111111111)<<pp)
		p("KMOVQ R9, K%d", pp+1)
	}
	p("MOVQ $0xcccccccccccccccc, R9")
	p("KMOVQ R9, K7")
}

// mulAlphaPow sets dst = src * alpha^s for the four 128-bit tweaks of src
// (s < 57), with temps t[0..2]. The s bits shifted out of the top are
// reduced by x^128 = x^7+x^2+x+1: top*0x87 = top ^ top<<1 ^ top<<2 ^ top<<7.
func mulAlphaPow(s int, src, dst string, t [3]string) {
	p("VPSRLQ $%d, %s, %s", 64-s, src, t[0])
	p("VPSLLQ $%d, %s, %s", s, src, dst)
	p("VPSLLDQ $8, %s, %s", t[0], t[1]) // low qword's carry into the high qword
	p("VPSRLDQ $8, %s, %s", t[0], t[0]) // high qword's carry, to reduce
	p("VPTERNLOGQ $0x96, %s, %s, %s", t[1], t[0], dst)
	p("VPSLLQ $1, %s, %s", t[0], t[1])
	p("VPSLLQ $2, %s, %s", t[0], t[2])
	p("VPSLLQ $7, %s, %s", t[0], t[0])
	p("VPTERNLOGQ $0x96, %s, %s, %s", t[1], t[2], dst)
	p("VPXORQ %s, %s, %s", t[0], dst, dst)
}

// kernel emits one function. The ECB kernels take n iterations of
// 32 blocks; the XTS kernels take `sectors` sectors of n iterations each and
// one initial tweak per sector in tweaks.
func kernel(name string, decrypt, xts bool) {
	const bytesPerIter = 256 * batches
	args := "t *[1024]byte, k *[40]uint32, dst, src *byte, n int"
	frame := "$0-40"
	if xts {
		args += ", tweaks *byte, sectors int"
		frame = fmt.Sprintf("$%d-56", bytesPerIter)
	}
	raw("\n// func %s(%s)", name, args)
	if xts {
		// Not NOSPLIT: the 512-byte frame gets the usual stack check.
		raw("TEXT ·%s(SB), 0, %s", name, frame)
	} else {
		raw("TEXT ·%s(SB), NOSPLIT, %s", name, frame)
	}
	p("MOVQ t+0(FP), AX")
	p("MOVQ k+8(FP), BX")
	p("MOVQ dst+16(FP), DI")
	p("MOVQ src+24(FP), SI")
	setup()
	if xts {
		p("MOVQ tweaks+40(FP), DX")
		p("MOVQ sectors+48(FP), R10")
		raw("sector:")
		p("TESTQ R10, R10")
		p("JZ done")
		// Tweaks of the blocks of one iteration, four per register in
		// block order: Z0 = T, T·α, T·α², T·α³, then each next register
		// is the previous one times α^4. They live in the stack frame
		// during an iteration and advance by α^(16*batches) after it.
		p("VMOVDQU 0(DX), X0")
		mulAlphaPow(1, "X0", "X1", [3]string{"X4", "X5", "X6"})
		mulAlphaPow(1, "X1", "X2", [3]string{"X4", "X5", "X6"})
		mulAlphaPow(1, "X2", "X3", [3]string{"X4", "X5", "X6"})
		p("VINSERTI32X4 $1, X1, Z0, Z0")
		p("VINSERTI32X4 $2, X2, Z0, Z0")
		p("VINSERTI32X4 $3, X3, Z0, Z0")
		p("VMOVDQU64 Z0, 0(SP)")
		for i := 1; i < 4*batches; i++ {
			mulAlphaPow(4, "Z0", "Z0", [3]string{"Z4", "Z5", "Z6"})
			p("VMOVDQU64 Z0, %d(SP)", 64*i)
		}
	}
	p("MOVQ n+32(FP), CX")
	raw("loop:")
	p("TESTQ CX, CX")
	if xts {
		p("JZ next")
	} else {
		p("JZ done")
	}
	loads := [4]string{"Z8", "Z9", "Z10", "Z11"}
	tmp := [4]string{"Z12", "Z13", "Z14", "Z15"}
	// Words in load order: encryption reads A, B, C, D; decryption reads
	// C, D, A, B (the output order).
	A, B, C, D := 0, 1, 2, 3
	order := [4]int{A, B, C, D}
	if decrypt {
		order = [4]int{C, D, A, B}
	}
	for b := 0; b < batches; b++ {
		for i, r := range loads {
			off := 256*b + 64*i
			p("VMOVDQU64 %d(SI), %s", off, r)
			if xts {
				p("VPXORD %d(SP), %s, %s", off, r, r)
			}
		}
		w := state(b)
		transpose(loads, [4]string{w[order[0]], w[order[1]], w[order[2]], w[order[3]]}, tmp)
		for i, o := range order {
			key := i
			if decrypt {
				key = 4 + i
			}
			p("VPXORD.BCST %d(BX), %s, %s", 4*key, w[o], w[o])
		}
	}
	if !decrypt {
		for r := 0; r < 16; r++ {
			if r%2 == 0 {
				round(r, A, B, C, D, false)
			} else {
				round(r, C, D, A, B, false)
			}
		}
		order = [4]int{C, D, A, B}
	} else {
		for r := 15; r >= 0; r-- {
			if r%2 == 0 {
				round(r, A, B, C, D, true)
			} else {
				round(r, C, D, A, B, true)
			}
		}
		order = [4]int{A, B, C, D}
	}
	for b := 0; b < batches; b++ {
		w := state(b)
		for i, o := range order {
			key := 4 + i
			if decrypt {
				key = i
			}
			p("VPXORD.BCST %d(BX), %s, %s", 4*key, w[o], w[o])
		}
		transpose([4]string{w[order[0]], w[order[1]], w[order[2]], w[order[3]]}, loads, tmp)
		for i, r := range loads {
			off := 256*b + 64*i
			if xts {
				p("VPXORD %d(SP), %s, %s", off, r, r)
			}
			p("VMOVDQU64 %s, %d(DI)", r, off)
		}
	}
	p("ADDQ $%d, SI", bytesPerIter)
	p("ADDQ $%d, DI", bytesPerIter)
	p("DECQ CX")
	if xts {
		// Advance the tweaks unless this was the sector's last run.
		p("JZ next")
		for i := 0; i < 4*batches; i++ {
			p("VMOVDQU64 %d(SP), Z8", 64*i)
			mulAlphaPow(16*batches, "Z8", "Z8", [3]string{"Z9", "Z10", "Z11"})
			p("VMOVDQU64 Z8, %d(SP)", 64*i)
		}
	}
	p("JMP loop")
	if xts {
		raw("next:")
		p("ADDQ $16, DX")
		p("DECQ R10")
		p("JMP sector")
	}
	raw("done:")
	p("VZEROUPPER")
	p("RET")
}

func main() {
	raw("// Code generated by gen_avx512.go; DO NOT EDIT.\n")
	raw("//go:build amd64 && !purego\n")
	raw("#include \"textflag.h\"\n")
	constants()
	kernel("encryptAVX512", false, false)
	kernel("decryptAVX512", true, false)
	kernel("encryptXTSAVX512", false, true)
	kernel("decryptXTSAVX512", true, true)
	if err := os.WriteFile("avx512_amd64.s", out.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
