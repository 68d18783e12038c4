//go:build !amd64 || purego

package streebog

// compress is the compression function g_N. It is a plain function (not a
// function variable) so escape analysis sees that its arguments stay on
// the caller's stack: Sum then allocates nothing.
func compress(h *[8]uint64, m *[8]uint64, n uint64) { compressGeneric(h, m, n) }

// compress2 runs two independent g_N with the same N.
func compress2(h1, m1, h2, m2 *[8]uint64, n uint64) {
	compressGeneric(h1, m1, n)
	compressGeneric(h2, m2, n)
}
