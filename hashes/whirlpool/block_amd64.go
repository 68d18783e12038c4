//go:build amd64 && !purego

package whirlpool

import "encoding/binary"

// block runs the compression function on every 64-byte block of p, in
// assembly (see gen_asm.go): the same lookups as blockGeneric with the
// state in a stack frame.
func block(h *[8]uint64, p []byte) {
	for len(p) >= BlockSize {
		var m [8]uint64
		for i := range m {
			m[i] = binary.BigEndian.Uint64(p[8*i:])
		}
		blockAsm(h, &m)
		p = p[BlockSize:]
	}
}

// blockWords is the compression function on a block given as its eight
// big-endian words.
func blockWords(h, m *[8]uint64) { blockAsm(h, m) }

//go:noescape
func blockAsm(h, m *[8]uint64)
