//go:build amd64 && !purego

package argon2

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 compression function; tests switch it off to
// run the generic one on the same vectors.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func processBlockAVX2(out, x, y *[blockWords]uint64, xor bool)

func processBlock(out, x, y *block, xor bool) {
	if useAVX2 {
		processBlockAVX2((*[blockWords]uint64)(out), (*[blockWords]uint64)(x), (*[blockWords]uint64)(y), xor)
		return
	}
	processBlockGeneric(out, x, y, xor)
}
