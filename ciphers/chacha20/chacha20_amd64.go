//go:build amd64 && !purego

package chacha20

import "golang.org/x/sys/cpu"

//go:generate go run asmgen/gen.go

// xorKeyStream16AVX512 XORs lumps*1024 bytes of src with the key stream
// of state's next lumps*16 blocks into dst, and moves state[12] past them
// (the 32-bit counter wraps).
//
//go:noescape
func xorKeyStream16AVX512(state *[16]uint32, dst, src *byte, lumps int)

// haveKernel: the kernel needs AVX-512F only (zmm adds, xors, VPROLD,
// unpacks and VSHUFI32X4).
var haveKernel = cpu.X86.HasAVX512F

// Implementation names the code path New's ciphers take here.
func Implementation() string {
	if haveKernel {
		return "AVX-512, 16 blocks at once"
	}
	return "golang.org/x/crypto/chacha20"
}
