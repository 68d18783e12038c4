//go:build ignore

// gen_gfni writes gfni_amd64.s, the AVX-512 + GFNI Camellia kernel. Run with
// `go generate` (see dispatch_amd64.go).
//
// The kernel encrypts or decrypts 64 blocks per iteration in byte-sliced
// form: after a 16x16 byte transpose inside each 128-bit lane, ZMM register
// c holds byte c of all 64 blocks (four lanes of sixteen blocks). Every step
// of Camellia then works on 64 blocks at once:
//
//   - key bytes are XORed in with VPXORD and a 32-bit broadcast of the byte
//     (the Go side stores each subkey byte replicated into a uint32);
//   - each S-box is GF2P8AFFINEQB then GF2P8AFFINEINVQB (see gfni.go for the
//     decomposition of SBOX1 into affine maps around AES-field inversion);
//   - the P-function is 16 XORs on whole registers, the last four fused with
//     the Feistel XOR into three-input VPTERNLOGDs;
//   - the FL layer's 32-bit rotate by one bit is a byte-wise add (shift left)
//     plus, from the neighbouring byte, its top bit moved to bit 0 by one
//     more GF2P8AFFINEQB.
//
// Register use: Z0-Z16 hold the sixteen state bytes plus one free register
// that the transposes rotate through (the generator tracks which physical
// register holds which byte), Z17-Z24 are temporaries, Z25-Z30 the
// broadcast matrices.
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

func z(n int) string { return fmt.Sprintf("Z%d", n) }

// Matrix registers, in the order of gfniMatrices in gfni.go.
const (
	matPre1 = 25 + iota
	matPre4
	matPost1
	matPost2
	matPost3
	matTopBit
)

// Immediates matching gfni.go: A·0xc5, and 0x6e, rotl1(0x6e), rotr1(0x6e).
const (
	preConst   = 0x08 // checked against gfniPreConst by TestGFNIGeneratorConstants
	postConst1 = 0x6e
	postConst2 = 0xdc
	postConst3 = 0x37
)

// Key layout (uint32 words): kw1..kw4, k1..k24, ke1..ke6, 8 bytes each.
func kwOff(q, j int) int { return 4 * (q*8 + j) }
func kOff(r, j int) int  { return 4 * ((4+r)*8 + j) }
func keOff(e, j int) int { return 4 * ((28+e)*8 + j) }

// state maps the 16 state bytes (0-7 = D1, 8-15 = D2) to physical registers
// during the rounds; during transposes it maps network positions.
var (
	state [16]int
	free  int
)

func bitrev4(i int) int { return (i&1)<<3 | (i&2)<<1 | (i&4)>>1 | (i&8)>>3 }

// transpose runs the four-stage unpack network on the registers at network
// positions 0..15 and leaves the results at positions 0..15. Fed with rows
// in bit-reversed order it is an exact 16x16 byte transpose per lane.
func transpose() {
	for _, op := range []string{"BW", "WD", "DQ", "QDQ"} {
		var next [16]int
		for i := 0; i < 8; i++ {
			a, b := state[i], state[i+8]
			p("VPUNPCKL%s %s, %s, %s", op, z(b), z(a), z(free))
			p("VPUNPCKH%s %s, %s, %s", op, z(b), z(a), z(b))
			next[2*i], next[2*i+1] = free, b
			free = a
		}
		state = next
	}
}

func tmp(i int) string { return z(17 + i) }

// round applies one Feistel round: out ^= F(in ^ k_r).
func round(r int, in, out []int) {
	for j := 0; j < 8; j++ {
		p("VPXORD.BCST %d(AX), %s, %s", kOff(r, j), z(in[j]), tmp(j))
	}
	pre := [8]int{matPre1, matPre1, matPre1, matPre4, matPre1, matPre1, matPre4, matPre1}
	post := [8]int{matPost1, matPost2, matPost3, matPost1, matPost2, matPost3, matPost1, matPost1}
	postC := map[int]int{matPost1: postConst1, matPost2: postConst2, matPost3: postConst3}
	for j := 0; j < 8; j++ {
		p("VGF2P8AFFINEQB $0x%02x, %s, %s, %s", preConst, z(pre[j]), tmp(j), tmp(j))
	}
	for j := 0; j < 8; j++ {
		p("VGF2P8AFFINEINVQB $0x%02x, %s, %s, %s", postC[post[j]], z(post[j]), tmp(j), tmp(j))
	}
	// P-function: three layers of four XORs leave y5..y8 in x0..x3 and
	// y1..y4 one XOR away in x4..x7 (x_{4+i} ^ x_{(i+3)%4}).
	xor := func(d, s int) { p("VPXORQ %s, %s, %s", tmp(s), tmp(d), tmp(d)) }
	xor(0, 5)
	xor(1, 6)
	xor(2, 7)
	xor(3, 4)
	xor(4, 2)
	xor(5, 3)
	xor(6, 0)
	xor(7, 1)
	xor(0, 7)
	xor(1, 4)
	xor(2, 5)
	xor(3, 6)
	for i := 0; i < 4; i++ {
		p("VPTERNLOGD $0x96, %s, %s, %s", tmp((i+3)%4), tmp(4+i), z(out[i]))
	}
	for i := 0; i < 4; i++ {
		p("VPXORQ %s, %s, %s", tmp(i), z(out[4+i]), z(out[4+i]))
	}
}

// rotXor sets x2 ^= (x1 & k1) <<< 1 on byte-sliced 32-bit halves, k1 being
// bytes 0-3 of layer key e.
func rotXor(e int, x1, x2 []int) {
	for i := 0; i < 4; i++ {
		p("VPANDD.BCST %d(AX), %s, %s", keOff(e, i), z(x1[i]), tmp(i))
	}
	for i := 0; i < 4; i++ { // top bit of the next (less significant) byte
		p("VGF2P8AFFINEQB $0, %s, %s, %s", z(matTopBit), tmp((i+1)%4), tmp(4+i))
	}
	for i := 0; i < 4; i++ {
		p("VPADDB %s, %s, %s", tmp(i), tmp(i), tmp(i))
	}
	for i := 0; i < 4; i++ { // x2 ^= (t << 1) | carry, imm 0x1e = A ^ (B | C)
		p("VPTERNLOGD $0x1e, %s, %s, %s", tmp(4+i), tmp(i), z(x2[i]))
	}
}

// orXor sets x1 ^= x2 | k2, k2 being bytes 4-7 of layer key e.
func orXor(e int, x1, x2 []int) {
	for i := 0; i < 4; i++ {
		p("VPTERNLOGD.BCST $0x1e, %d(AX), %s, %s", keOff(e, 4+i), z(x2[i]), z(x1[i]))
	}
}

func whiten(q int, d []int) {
	for j := 0; j < 8; j++ {
		p("VPXORD.BCST %d(AX), %s, %s", kwOff(q, j), z(d[j]), z(d[j]))
	}
}

func main() {
	raw("// Code generated by gen_gfni.go; DO NOT EDIT.")
	raw("")
	raw("//go:build amd64 && !purego")
	raw("")
	raw("#include \"textflag.h\"")
	kernel(false)
	kernel(true)
	if err := os.WriteFile("gfni_amd64.s", out.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

// kernel emits cryptGFNI, or with xts cryptXTSGFNI, which also XORs a
// caller-computed tweak mask (one 16-byte tweak per block, len(src) bytes)
// into every block before and after the cipher.
func kernel(xts bool) {
	name, args, frame := "cryptGFNI", "", 64
	if xts {
		name, args, frame = "cryptXTSGFNI", ", mask []byte", 88
	}
	raw("")
	raw("// func %s(keys *[gfniKeyWords]uint32, rounds int, dst, src []byte%s)", name, args)
	raw("// len(src) must be a multiple of 1024; rounds is 18 or 24.")
	raw("TEXT ·%s(SB), NOSPLIT, $0-%d", name, frame)
	p("MOVQ keys+0(FP), AX")
	p("MOVQ rounds+8(FP), BX")
	p("MOVQ dst_base+16(FP), DI")
	p("MOVQ src_base+40(FP), SI")
	p("MOVQ src_len+48(FP), CX")
	if xts {
		p("MOVQ mask_base+64(FP), R8")
	}
	p("SHRQ $10, CX")
	p("JZ %s_done", name)
	for i := 0; i < 6; i++ {
		p("VPBROADCASTQ ·gfniMatrices+%d(SB), %s", 8*i, z(matPre1+i))
	}
	raw("%s_loop:", name)
	// Load row bitrev(i) into network position i.
	for i := 0; i < 16; i++ {
		state[i] = i
		p("VMOVDQU64 %d(SI), %s", 64*bitrev4(i), z(i))
		if xts {
			p("VPXORQ %d(R8), %s, %s", 64*bitrev4(i), z(i), z(i))
		}
	}
	free = 16
	transpose()
	d1 := append([]int(nil), state[0:8]...)
	d2 := append([]int(nil), state[8:16]...)

	whiten(0, d1)
	whiten(1, d2)
	for r := 0; r < 24; r++ {
		if r == 18 {
			p("CMPQ BX, $18")
			p("JEQ %s_final", name)
		}
		if r%6 == 0 && r > 0 {
			e := 2 * (r/6 - 1)
			rotXor(e, d1[0:4], d1[4:8]) // FL on D1
			orXor(e, d1[0:4], d1[4:8])
			orXor(e+1, d2[0:4], d2[4:8]) // FLINV on D2
			rotXor(e+1, d2[0:4], d2[4:8])
		}
		if r%2 == 0 {
			round(r, d1, d2)
		} else {
			round(r, d2, d1)
		}
	}
	raw("%s_final:", name)
	whiten(2, d2)
	whiten(3, d1)
	// Output block = D2 || D1: byte c comes from D2[c] (c < 8) or D1[c-8].
	var sliced [16]int
	copy(sliced[0:8], d2)
	copy(sliced[8:16], d1)
	for i := 0; i < 16; i++ {
		state[i] = sliced[bitrev4(i)]
	}
	transpose()
	for r := 0; r < 16; r++ {
		if xts {
			p("VPXORQ %d(R8), %s, %s", 64*r, z(state[r]), z(state[r]))
		}
		p("VMOVDQU64 %s, %d(DI)", z(state[r]), 64*r)
	}
	p("ADDQ $1024, SI")
	p("ADDQ $1024, DI")
	if xts {
		p("ADDQ $1024, R8")
	}
	p("DECQ CX")
	p("JNZ %s_loop", name)
	raw("%s_done:", name)
	p("VZEROUPPER")
	p("RET")
}
