//go:build amd64 && !purego

package streebog

import (
	"encoding/binary"

	"golang.org/x/sys/cpu"
)

// useGFNI selects the AVX-512 + GFNI g_N (gen_gfni.go); a variable so
// tests can compare both kernels.
var useGFNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI && cpu.X86.HasAVX512GFNI

// compress is the compression function g_N (see compressGeneric), here
// in assembly: with AVX-512 and GFNI on the whole state in one register,
// otherwise the table lookups with the state in a stack frame.
func compress(h *[8]uint64, m *[8]uint64, n uint64) {
	if useGFNI {
		compressGFNI(h, m, n, gfni)
		return
	}
	compressAsm(h, m, n)
}

// compress2 runs two independent g_N with the same N: interleaved with
// AVX-512 and GFNI, where one g_N leaves most of the CPU idle waiting on
// its own results. The table kernel's two-chain form, compressAsm2, is
// not used: on Zen 4 it costs as much as two compressAsm or more (244
// against 235 ns/op per g_N), one g_N already filling the dispatch and
// the memory ports (gen_asm.go); BenchmarkCompressTables2 re-measures it.
func compress2(h1, m1, h2, m2 *[8]uint64, n uint64) {
	if useGFNI {
		compressGFNI2(h1, m1, h2, m2, n, gfni)
		return
	}
	compressAsm(h1, m1, n)
	compressAsm(h2, m2, n)
}

//go:noescape
func compressAsm(h, m *[8]uint64, n uint64)

//go:noescape
func compressAsm2(h1, m1, h2, m2 *[8]uint64, n uint64)

//go:noescape
func compressGFNI2(h1, m1, h2, m2 *[8]uint64, n uint64, c *gfniConsts)

//go:noescape
func compressGFNI(h, m *[8]uint64, n uint64, c *gfniConsts)

// gfniConsts are compressGFNI's constants, in the order it loads them.
// "Transposed" is its layout of a 512-bit value: byte 8k+i holds byte k
// of word i.
type gfniConsts struct {
	pi [256]byte
	// idx[b] gathers, from a transposed value, byte i of word b into byte
	// i of every qword lane (VPERMB indexes).
	idx [8][64]byte
	// mat[b][k] is the 8x8 bit matrix A_(k,b), in VGF2P8AFFINEQB's form,
	// mapping byte b of a word to byte k of its image under l.
	mat [8][8]uint64
	// tr transposes (VPERMB indexes).
	tr [64]byte
	// c holds C_1..C_12, transposed.
	c [12][64]byte
}

var gfni = newGFNIConsts()

func newGFNIConsts() *gfniConsts {
	g := new(gfniConsts)
	g.pi = pi
	for b := range 8 {
		for k := range 8 {
			for i := range 8 {
				g.idx[b][8*k+i] = byte(8*i + b)
			}
			// Result bit r of the affine transform is the parity of
			// the input byte masked by byte 7-r of the matrix.
			var a uint64
			for j := range 8 {
				col := linear(1 << (8*b + j)) // image of input bit j of byte b
				for r := range 8 {
					if col>>(8*k+r)&1 != 0 {
						a |= 1 << (8*(7-r) + j)
					}
				}
			}
			g.mat[b][k] = a
		}
	}
	for k := range 8 {
		for i := range 8 {
			g.tr[8*k+i] = byte(8*i + k)
		}
	}
	for r := range 12 {
		var nat [64]byte
		for w := range 8 {
			binary.LittleEndian.PutUint64(nat[8*w:], iterC[r][w])
		}
		for x := range 64 {
			g.c[r][x] = nat[g.tr[x]]
		}
	}
	return g
}
