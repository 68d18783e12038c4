//go:build !amd64 || purego

package streebog

// compress is the compression function g_N. It is a plain function (not a
// function variable) so escape analysis sees that its arguments stay on
// the caller's stack: Sum then allocates nothing.
func compress(h *[8]uint64, m *[8]uint64, n uint64) { compressGeneric(h, m, n) }
