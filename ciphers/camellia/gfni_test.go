package camellia

import (
	"math/bits"
	"testing"
)

// gf2p8affine emulates GF2P8AFFINEQB on one byte.
func gf2p8affine(x byte, q uint64, imm byte) byte {
	var y byte
	for i := 0; i < 8; i++ {
		row := byte(q >> (8 * (7 - i)))
		y |= byte(bits.OnesCount8(row&x)&1) << i
	}
	return y ^ imm
}

// aesMul multiplies in AES's GF(2^8).
func aesMul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 != 0 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0x1b
		}
		b >>= 1
	}
	return p
}

func aesInverseTable() [256]byte {
	var inv [256]byte
	for x := 1; x < 256; x++ {
		for y := 1; y < 256; y++ {
			if aesMul(byte(x), byte(y)) == 1 {
				inv[x] = byte(y)
				break
			}
		}
	}
	return inv
}

// TestGFNIDecomposition checks, for every input byte, that the matrices and
// constants the amd64 kernel uses reproduce SBOX1..SBOX4 of RFC 3713 through
// an emulation of GF2P8AFFINEQB + GF2P8AFFINEINVQB.
func TestGFNIDecomposition(t *testing.T) {
	inv := aesInverseTable()
	post := func(x byte, m uint64, c byte) byte { return gf2p8affine(inv[x], m, c) }
	for x := 0; x < 256; x++ {
		b := byte(x)
		pre1 := gf2p8affine(b, gfniMatrices[0], gfniPreConst)
		pre4 := gf2p8affine(b, gfniMatrices[1], gfniPreConst)
		got := [4]byte{
			post(pre1, gfniMatrices[2], gfniPostConst[0]),
			post(pre1, gfniMatrices[3], gfniPostConst[1]),
			post(pre1, gfniMatrices[4], gfniPostConst[2]),
			post(pre4, gfniMatrices[2], gfniPostConst[0]),
		}
		for s := 0; s < 4; s++ {
			want := sboxAt([4]int{0, 1, 2, 3}[s], b)
			if got[s] != want {
				t.Fatalf("SBOX%d(%#02x) = %#02x via GFNI, want %#02x", s+1, b, got[s], want)
			}
		}
		if m := gf2p8affine(b, gfniMatrices[5], 0); m != b>>7 {
			t.Fatalf("top-bit matrix: %#02x -> %#02x", b, m)
		}
	}
}

// TestGFNIDerivation re-derives A and B from SBOX1 with the linear
// equivalence algorithm and checks they are the constants in gfni.go.
func TestGFNIDerivation(t *testing.T) {
	inv := aesInverseTable()
	var s2 [256]byte // s1(y ^ c5) ^ s1(c5) = B·inv(A·y)
	for y := 0; y < 256; y++ {
		s2[y] = sbox1[byte(y)^sboxInConst] ^ sbox1[sboxInConst]
	}
	if sbox1[sboxInConst] != sboxOutConst {
		t.Fatalf("s1(0xc5) = %#02x, want 0x6e", sbox1[sboxInConst])
	}
	a, b, ok := linearEquivalence(&inv, &s2)
	if !ok {
		t.Fatal("SBOX1 is not affine-equivalent to AES inversion with these constants")
	}
	if a != linearMap(sboxPreImages) || b != linearMap(sboxPostImages) {
		t.Fatalf("derived A = %x, B = %x; gfni.go has %x, %x", a, b, sboxPreImages, sboxPostImages)
	}
}

// linearEquivalence finds linear A, B with s2(x) = B(s1(A(x))) for bijections
// s1, s2 fixing 0: guess A on unit vectors, then alternately extend A and B
// by linearity and through s1, s2 until both are defined everywhere or a
// contradiction rejects the guess. The first solution in guess order wins,
// which makes the result deterministic.
func linearEquivalence(s1, s2 *[256]byte) (a, b linearMap, ok bool) {
	var s1inv, s2inv [256]byte
	for x := 0; x < 256; x++ {
		s1inv[s1[x]] = byte(x)
		s2inv[s2[x]] = byte(x)
	}
	var try func(guesses []byte) (linearMap, linearMap, bool)
	try = func(guesses []byte) (linearMap, linearMap, bool) {
		var am, bm partialMap
		am.init()
		bm.init()
		for i, g := range guesses {
			if !am.add(1<<i, g) {
				return linearMap{}, linearMap{}, false
			}
		}
		for {
			progress := false
			for am.pending() {
				x := am.next()
				progress = true
				if !bm.add(s1[am.v[x]], s2[x]) {
					return linearMap{}, linearMap{}, false
				}
			}
			for bm.pending() {
				y := bm.next()
				progress = true
				if !am.add(s2inv[bm.v[y]], s1inv[y]) {
					return linearMap{}, linearMap{}, false
				}
			}
			if am.n == 256 && bm.n == 256 {
				return am.linear(), bm.linear(), true
			}
			if !progress {
				break
			}
		}
		if len(guesses) == 8 {
			return linearMap{}, linearMap{}, false
		}
		for g := 1; g < 256; g++ {
			if a, b, ok := try(append(guesses, byte(g))); ok {
				return a, b, true
			}
		}
		return linearMap{}, linearMap{}, false
	}
	return try(nil)
}

// partialMap is a linear map known on a subspace.
type partialMap struct {
	v     [256]byte
	known [256]bool
	n     int
	queue []byte
}

func (m *partialMap) init() { m.known[0], m.n = true, 1 }

func (m *partialMap) pending() bool { return len(m.queue) > 0 }

func (m *partialMap) next() byte {
	x := m.queue[len(m.queue)-1]
	m.queue = m.queue[:len(m.queue)-1]
	return x
}

// add records m(x) = y and closes the domain under linearity; false on a
// contradiction.
func (m *partialMap) add(x, y byte) bool {
	if m.known[x] {
		return m.v[x] == y
	}
	var dom []byte
	for z := 0; z < 256; z++ {
		if m.known[z] {
			dom = append(dom, byte(z))
		}
	}
	for _, z := range dom {
		w := z ^ x
		if m.known[w] {
			if m.v[w] != m.v[z]^y {
				return false
			}
			continue
		}
		m.v[w], m.known[w] = m.v[z]^y, true
		m.n++
		m.queue = append(m.queue, w)
	}
	return true
}

func (m *partialMap) linear() linearMap {
	var l linearMap
	for j := range l {
		l[j] = m.v[1<<j]
	}
	return l
}
