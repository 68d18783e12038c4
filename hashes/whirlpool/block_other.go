//go:build !amd64 || purego

package whirlpool

import "encoding/binary"

// block is the compression function used by Digest. It is a plain function
// (not a function variable) so escape analysis sees that the state and the
// buffer stay on the caller's stack: Sum then allocates nothing.
func block(h *[8]uint64, p []byte) { blockGeneric(h, p) }

// blockWords is the compression function on a block given as its eight
// big-endian words.
func blockWords(h, m *[8]uint64) {
	var p [BlockSize]byte
	for i, v := range m {
		binary.BigEndian.PutUint64(p[8*i:], v)
	}
	blockGeneric(h, p[:])
}

// initArch has nothing to build here.
func initArch() {}

// blockWords2 is two independent blockWords.
func blockWords2(h1, m1, h2, m2 *[8]uint64) {
	blockWords(h1, m1)
	blockWords(h2, m2)
}
