package bitlk

import (
	"os"
	"strings"

	"golang.org/x/sys/cpu"
)

//go:noescape
func roundsSHANI(last *[8]uint32, initial *[8]uint32, salt *[4]uint32, counter, n uint64)

func cpuidSHA() bool

// haveSHANI: the SHA extensions and the SSSE3/SSE4.1 the kernel also
// uses. x/sys/cpu has no SHA flag, so CPUID is read here, and GODEBUG's
// cpu.sha=off (which the runtime honours for crypto/sha256) or
// cpu.all=off masks it the same way.
var haveSHANI = cpuidSHA() && cpu.X86.HasSSSE3 && cpu.X86.HasSSE41 && !godebugOff("sha")

func godebugOff(feature string) bool {
	for _, f := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if f == "cpu."+feature+"=off" || f == "cpu.all=off" {
			return true
		}
	}
	return false
}

// stretchKernel: SHA-NI; else crypto/sha256, whose AVX2 assembly beats
// the Go word kernel (365 against 600 ns a round on a Xeon); the word
// kernel only where neither is there.
var stretchKernel = func() kernel {
	switch {
	case haveSHANI:
		return kernelSHANI
	case cpu.X86.HasAVX2 && cpu.X86.HasBMI2 && !godebugOff("avx2"):
		return kernelSum256
	}
	return kernelWords
}()
