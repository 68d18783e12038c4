package adiantum

import "encoding/binary"

// NH is the ε-almost-universal hash of UMAC (RFC 4418), as Adiantum
// instantiates it (the Adiantum paper, section 6.3, and Linux's
// crypto/nhpoly1305.c): a message of up to 1024 bytes, in 16-byte units
// of four 32-bit words m0..m3, is hashed with a 1072-byte key into four
// 64-bit sums, one per pass p (0..3), each the sum over units i of
//
//	(m0 + k[4i+4p]) * (m2 + k[4i+4p+2]) + (m1 + k[4i+4p+1]) * (m3 + k[4i+4p+3])
//
// with the additions mod 2^32 and the products and sums mod 2^64: 32-bit
// multiply-accumulate, which every SIMD unit has (PMULUDQ, VMULL.U32).
//
// The kernels are chosen at start-up from golang.org/x/sys/cpu. Each
// architecture provides, in nh_GOARCH.go (nh_other.go where there is
// none): nhImpl, the path in use; nhImpls, every path the CPU can run,
// for the tests (TestNHKernelsMatchGeneric runs each against nhGeneric);
// nhImplName; and nhWith, which runs a path over whole units of at most
// 1024 bytes. A kernel may take nhKey.words or nhKey.permuted, whichever
// pairs the words its multiply wants.

const (
	nhUnit     = 16   // bytes per NH unit
	nhMessage  = 1024 // bytes NH hashes at most
	nhKeyWords = nhMessage/4 + 4*3
	nhKeySize  = 4 * nhKeyWords // 1072
)

// nhKey is the NH key twice: as the specification reads it, and with
// every aligned group of four words reordered (k0, k2, k1, k3), which is
// the order the SIMD kernels pair the words in.
type nhKey struct {
	words    [nhKeyWords]uint32
	permuted [nhKeyWords]uint32
}

func newNHKey(b []byte) *nhKey {
	k := new(nhKey)
	for i := range k.words {
		k.words[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	for g := 0; g < nhKeyWords; g += 4 {
		k.permuted[g], k.permuted[g+1], k.permuted[g+2], k.permuted[g+3] =
			k.words[g], k.words[g+2], k.words[g+1], k.words[g+3]
	}
	return k
}

func (k *nhKey) zero() {
	clear(k.words[:])
	clear(k.permuted[:])
}

// nhGeneric hashes msg (a whole number of units, at most 1024 bytes).
func nhGeneric(k *nhKey, msg []byte, out *[4]uint64) {
	var s0, s1, s2, s3 uint64
	key := k.words[:]
	for len(msg) >= nhUnit {
		m0 := binary.LittleEndian.Uint32(msg[0:])
		m1 := binary.LittleEndian.Uint32(msg[4:])
		m2 := binary.LittleEndian.Uint32(msg[8:])
		m3 := binary.LittleEndian.Uint32(msg[12:])
		s0 += uint64(m0+key[0])*uint64(m2+key[2]) + uint64(m1+key[1])*uint64(m3+key[3])
		s1 += uint64(m0+key[4])*uint64(m2+key[6]) + uint64(m1+key[5])*uint64(m3+key[7])
		s2 += uint64(m0+key[8])*uint64(m2+key[10]) + uint64(m1+key[9])*uint64(m3+key[11])
		s3 += uint64(m0+key[12])*uint64(m2+key[14]) + uint64(m1+key[13])*uint64(m3+key[15])
		key = key[4:]
		msg = msg[nhUnit:]
	}
	out[0], out[1], out[2], out[3] = s0, s1, s2, s3
}
