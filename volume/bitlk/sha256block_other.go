//go:build !amd64 && !arm64

package bitlk

import "runtime"

const asmName = "none"

var haveAsm = false

func roundsAsm(last *[8]uint32, initial *[8]uint32, salt *[4]uint32, counter, n uint64) {
	panic("bitlk: no key-stretch assembly on " + runtime.GOARCH)
}

// stretchKernel: crypto/sha256 where it has assembly (386, ppc64, s390x,
// riscv64, loong64); the Go word kernel where its SHA-256 is Go too
// (32-bit ARM, MIPS).
var stretchKernel = func() kernel {
	switch runtime.GOARCH {
	case "arm", "mips", "mipsle", "mips64", "mips64le", "wasm":
		return kernelWords
	}
	return kernelSum256
}()
