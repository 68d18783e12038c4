//go:build (!amd64 && !arm) || purego

package chacha20

// archKernels: none here yet; the generic Go kernel serves.
func archKernels() []kernel { return nil }

func (k kernel) xor(state *[16]uint32, rounds int, dst, src []byte) {
	xorGeneric(state, rounds, dst, src)
}

func allKernels() []kernel { return []kernel{genericKernel} }
