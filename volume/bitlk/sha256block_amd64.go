package bitlk

import "golang.org/x/sys/cpu"

// roundsAsm runs n rounds of the key stretch with SHA-NI
// (sha256block_amd64.s).
//
//go:noescape
func roundsAsm(last *[8]uint32, initial *[8]uint32, salt *[4]uint32, counter, n uint64)

func cpuidSHA() bool

const asmName = "sha-ni"

// haveAsm: the SHA extensions and the SSSE3/SSE4.1 the kernel also uses.
// x/sys/cpu has no SHA flag, so CPUID is read here, and GODEBUG's
// cpu.sha=off (which the runtime honours for crypto/sha256) or
// cpu.all=off masks it the same way.
var haveAsm = cpuidSHA() && cpu.X86.HasSSSE3 && cpu.X86.HasSSE41 && !godebugOff("sha")

// stretchKernel: SHA-NI; else crypto/sha256, whose AVX2 assembly beats
// the Go word kernel (365 against 600 ns a round on an EPYC); the word
// kernel where neither is there.
var stretchKernel = func() kernel {
	switch {
	case haveAsm:
		return kernelAsm
	case cpu.X86.HasAVX2 && cpu.X86.HasBMI2 && !godebugOff("avx2"):
		return kernelSum256
	}
	return kernelWords
}()
