package sector

import "encoding/binary"

// The helpers below XOR and copy whole cipher blocks. Byte order does not
// matter for XOR, so they use the native order: on every architecture the
// compiler turns these into plain word loads and stores where it can.

var ne = binary.NativeEndian

// xorBlock16 sets d = a ^ b for one 16-byte block.
func xorBlock16(d, a, b []byte) {
	_, _, _ = d[15], a[15], b[15]
	ne.PutUint64(d, ne.Uint64(a)^ne.Uint64(b))
	ne.PutUint64(d[8:], ne.Uint64(a[8:])^ne.Uint64(b[8:]))
}

// xorBlock8 sets d = a ^ b for one 8-byte block.
func xorBlock8(d, a, b []byte) {
	_, _, _ = d[7], a[7], b[7]
	ne.PutUint64(d, ne.Uint64(a)^ne.Uint64(b))
}

// xorBlock sets d = a ^ b for one block of len(d) bytes.
func xorBlock(d, a, b []byte) {
	switch len(d) {
	case 16:
		xorBlock16(d, a, b)
	case 8:
		xorBlock8(d, a, b)
	default:
		for i := range d {
			d[i] = a[i] ^ b[i]
		}
	}
}
