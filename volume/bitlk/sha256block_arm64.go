package bitlk

import "golang.org/x/sys/cpu"

// roundsAsm runs n rounds of the key stretch with the ARMv8 SHA-256
// instructions (sha256block_arm64.s).
//
//go:noescape
func roundsAsm(last *[8]uint32, initial *[8]uint32, salt *[4]uint32, counter, n uint64)

const asmName = "armv8-sha2"

// haveAsm is ARMv8's SHA-256 extension (x/sys/cpu honours GODEBUG's
// cpu.sha2=off and cpu.all=off for it).
var haveAsm = cpu.ARM64.HasSHA2

// stretchKernel: the SHA-256 instructions; the Go word kernel without
// them (the Raspberry Pi 3 and 4 have no crypto extensions).
var stretchKernel = func() kernel {
	if haveAsm {
		return kernelAsm
	}
	return kernelWords
}()
