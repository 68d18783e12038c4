//go:build amd64 && !purego

package whirlpool

import (
	"encoding/binary"

	"golang.org/x/sys/cpu"
)

// useGFNI selects the AVX-512 + GFNI compression function (gen_gfni.go);
// a variable so tests can compare both kernels.
var useGFNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI && cpu.X86.HasAVX512GFNI

// block runs the compression function on every 64-byte block of p.
func block(h *[8]uint64, p []byte) {
	for len(p) >= BlockSize {
		var m [8]uint64
		for i := range m {
			m[i] = binary.BigEndian.Uint64(p[8*i:])
		}
		blockWords(h, &m)
		p = p[BlockSize:]
	}
}

// blockWords is the compression function on a block given as its eight
// big-endian words, in assembly: with AVX-512 and GFNI on the whole state
// in one register, otherwise the table lookups with the state in a stack
// frame (gen_asm.go).
func blockWords(h, m *[8]uint64) {
	if useGFNI {
		blockGFNI(h, m, gfni)
		return
	}
	blockAsm(h, m)
}

// blockWords2 is two independent blockWords: interleaved with AVX-512
// and GFNI, where one compression leaves most of the CPU idle waiting on
// its own results. The table kernel's two-chain form, blockAsm2, is not
// used: on Zen 4 it costs more than two blockAsm (180 against 170 ns/op
// per compression), one compression already filling the dispatch and
// the memory ports (gen_asm.go); BenchmarkBlockTables2 re-measures it.
func blockWords2(h1, m1, h2, m2 *[8]uint64) {
	if useGFNI {
		blockGFNI2(h1, m1, h2, m2, gfni)
		return
	}
	blockAsm(h1, m1)
	blockAsm(h2, m2)
}

//go:noescape
func blockAsm(h, m *[8]uint64)

//go:noescape
func blockAsm2(h1, m1, h2, m2 *[8]uint64)

//go:noescape
func blockGFNI2(h1, m1, h2, m2 *[8]uint64, c *gfniConsts)

//go:noescape
func blockGFNI(h, m *[8]uint64, c *gfniConsts)

// gfniConsts are blockGFNI's constants, in the order it loads them.
// "Transposed" is its layout of the 8x8 byte matrix: byte 8p+i holds
// a[i][p], row i column p (a row is a big-endian word of h).
type gfniConsts struct {
	sbox [256]byte
	// idx[j] gathers, from a transposed state, a[i-j][j] into byte i of
	// every qword lane (VPERMB indexes): pi, the cyclical permutation.
	idx [8][64]byte
	// mat[j][p] multiplies by the MDS matrix entry c_(p-j) in GF(2^8),
	// as an 8x8 bit matrix in VGF2P8AFFINEQB's form: theta.
	mat [8][8]uint64
	// toT transposes a state of words, fromT transposes it back
	// (VPERMB indexes).
	toT, fromT [64]byte
	// rc holds the round constants, transposed.
	rc [rounds][64]byte
}

var gfni *gfniConsts

// initArch builds gfni from the S-box and the round constants; the
// tables' init calls it once they are set.
func initArch() {
	g := new(gfniConsts)
	g.sbox = sbox
	row := [8]byte{1, 1, 4, 1, 8, 5, 2, 9}
	for j := range 8 {
		for p := range 8 {
			for i := range 8 {
				g.idx[j][8*p+i] = byte(8*j + (i-j+8)%8)
			}
			// Result bit r of the affine transform is the parity of the
			// input byte masked by byte 7-r of the matrix.
			c := row[(p-j+8)%8]
			var a uint64
			for bit := range 8 {
				col := gfMul(1<<bit, c)
				for r := range 8 {
					if col>>r&1 != 0 {
						a |= 1 << (8*(7-r) + bit)
					}
				}
			}
			g.mat[j][p] = a
		}
	}
	for p := range 8 {
		for i := range 8 {
			g.toT[8*p+i] = byte(8*i + 7 - p)
			g.fromT[8*i+7-p] = byte(8*p + i)
		}
	}
	for r := range rounds {
		for p := range 8 {
			g.rc[r][8*p] = byte(rc[r] >> (56 - 8*p))
		}
	}
	gfni = g
}
