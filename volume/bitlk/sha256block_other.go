//go:build !amd64

package bitlk

import (
	"runtime"

	"golang.org/x/sys/cpu"
)

// roundsSHANI exists on amd64 only.
func roundsSHANI(last *[8]uint32, initial *[8]uint32, salt *[4]uint32, counter, n uint64) {
	panic("bitlk: no SHA-NI kernel on " + runtime.GOARCH)
}

var haveSHANI = false

// stretchKernel: crypto/sha256 where it has assembly (arm64 with the SHA2
// instructions, 386, ppc64, s390x, riscv64, loong64); the Go word kernel
// where its SHA-256 is Go too (32-bit ARM, MIPS, arm64 without SHA2).
var stretchKernel = func() kernel {
	switch runtime.GOARCH {
	case "arm64":
		if cpu.ARM64.HasSHA2 {
			return kernelSum256
		}
		return kernelWords
	case "arm", "mips", "mipsle", "mips64", "mips64le", "wasm":
		return kernelWords
	}
	return kernelSum256
}()
