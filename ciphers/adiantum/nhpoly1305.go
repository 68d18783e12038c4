package adiantum

// NHPoly1305 (Linux's crypto/nhpoly1305.c, the Adiantum paper section
// 6.3): NH of each 1024-byte chunk of the message, the last one padded
// with zeros to a whole 16-byte unit, and Poly1305 of the 32-byte NH
// values, without the final addition. Its key is the 16-byte Poly1305 r
// followed by the 1072-byte NH key.

const nhPolyKeySize = 16 + nhKeySize // 1088

type nhPolyKey struct {
	poly polyKey
	nh   *nhKey
}

func newNHPolyKey(b []byte) nhPolyKey {
	return nhPolyKey{poly: newPolyKey(b[:16]), nh: newNHKey(b[16:nhPolyKeySize])}
}

// sum returns NHPoly1305 of msg as a little-endian 128-bit number.
func (k *nhPolyKey) sum(msg []byte) (lo, hi uint64) {
	var s polyState
	var v [4]uint64
	impl := nhImpl
	for len(msg) >= nhMessage {
		nhWith(impl, k.nh, msg[:nhMessage], &v)
		s.words(&k.poly, &v)
		msg = msg[nhMessage:]
	}
	if len(msg) > 0 {
		if len(msg)%nhUnit != 0 {
			// Only odd message lengths get here, never a sector.
			var padded [nhMessage]byte
			n := copy(padded[:], msg)
			msg = padded[:(n+nhUnit-1)&^(nhUnit-1)]
		}
		nhWith(impl, k.nh, msg, &v)
		s.words(&k.poly, &v)
	}
	return s.sum()
}
