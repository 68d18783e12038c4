//go:build amd64 && !purego

package streebog

// compress is the compression function g_N (see compressGeneric), here
// in assembly: the same lookups with the state in a stack frame, every
// index byte loaded straight from it.
func compress(h *[8]uint64, m *[8]uint64, n uint64) { compressAsm(h, m, n) }

//go:noescape
func compressAsm(h, m *[8]uint64, n uint64)
