//go:build amd64 && !purego

package chacha20

import "golang.org/x/sys/cpu"

//go:generate go run asmgen/gen.go

// The kernels of chacha20_amd64.s, written by asmgen/gen.go. Each XORs
// lumps lumps of src (16, 8 or 4 blocks each) with the key stream of
// state's next blocks into dst, with rounds rounds, and moves state[12]
// past them.

//go:noescape
func xorKeyStream16AVX512(state *[16]uint32, rounds int, dst, src *byte, lumps int)

//go:noescape
func xorKeyStream8AVX2(state *[16]uint32, rounds int, dst, src *byte, lumps int)

//go:noescape
func xorKeyStream4SSSE3(state *[16]uint32, rounds int, dst, src *byte, lumps int)

//go:noescape
func xorKeyStream4SSE2(state *[16]uint32, rounds int, dst, src *byte, lumps int)

// archKernels: AVX-512F suffices for the zmm kernel (adds, xors, VPROLD,
// unpacks, VSHUFI32X4); AVX2 for the ymm one; SSE2 is always there.
// An AVX-512 machine runs AVX2 and SSE for the lumps too short for 16
// blocks (a 512-byte Adiantum sector is 8 blocks).
func archKernels() []kernel {
	var ks []kernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, kernel{kernelAVX512, "avx512", 16})
	}
	if cpu.X86.HasAVX2 {
		ks = append(ks, kernel{kernelAVX2, "avx2", 8})
	}
	if cpu.X86.HasSSSE3 {
		return append(ks, kernel{kernelSSSE3, "ssse3", 4})
	}
	return append(ks, kernel{kernelSSE2, "sse2", 4})
}

func (k kernel) xor(state *[16]uint32, rounds int, dst, src []byte) {
	if len(src) == 0 {
		return
	}
	_ = dst[len(src)-1]
	lumps := len(src) / (k.blocks * BlockSize)
	switch k.id {
	case kernelAVX512:
		xorKeyStream16AVX512(state, rounds, &dst[0], &src[0], lumps)
	case kernelAVX2:
		xorKeyStream8AVX2(state, rounds, &dst[0], &src[0], lumps)
	case kernelSSSE3:
		xorKeyStream4SSSE3(state, rounds, &dst[0], &src[0], lumps)
	case kernelSSE2:
		xorKeyStream4SSE2(state, rounds, &dst[0], &src[0], lumps)
	default:
		xorGeneric(state, rounds, dst, src)
	}
}

// allKernels lists every kernel this CPU can run, for the tests.
func allKernels() []kernel {
	ks := archKernels()
	if cpu.X86.HasSSSE3 {
		ks = append(ks, kernel{kernelSSE2, "sse2", 4})
	}
	return append(ks, genericKernel)
}
