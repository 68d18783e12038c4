package serpent

// implementation is one code path; tests switch between the available ones.
type implementation int

const (
	implGeneric implementation = iota
	implAVX2
	implAVX512
	implNEON
	implSSE2
)

func (i implementation) name() string {
	return [...]string{"generic", "avx2", "avx512", "neon", "sse2"}[i]
}
