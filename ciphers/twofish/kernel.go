package twofish

// kernel identifies one implementation of the bulk functions. Every kernel
// the machine supports can be forced with newWithKernel, which is how the
// tests run all of them on the same vectors.
type kernel int

const (
	kernelGeneric kernel = iota // portable Go, fused tables, 2 blocks interleaved on 64-bit
	kernelAVX512                // amd64 AVX-512 VBMI + GFNI, 32 blocks per run
)

func (k kernel) String() string {
	switch k {
	case kernelAVX512:
		return "amd64-avx512"
	default:
		return "generic"
	}
}
