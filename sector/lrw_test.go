package sector

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestLRWVectors checks the LRW-AES vectors of the IEEE P1619 drafts as the
// Linux kernel carries them. Each vector is one run of len(PT) bytes whose
// first block index is IV; IVPlain64BE with first = IV turns the sector
// number into exactly that index.
func TestLRWVectors(t *testing.T) {
	vs := readVectors(t, "testdata/lrw-aes-linux-testmgr.txt")
	if len(vs) != 8 {
		t.Fatalf("want 8 vectors, have %d", len(vs))
	}
	for _, v := range vs {
		key, iv := unhex(t, v["Key"]), unhex(t, v["IV"])
		pt, ct := unhex(t, v["PT"]), unhex(t, v["CT"])
		if binary.BigEndian.Uint64(iv) != 0 {
			t.Fatalf("%s: IV above 2^64 cannot be a sector number", v["Name"])
		}
		first := binary.BigEndian.Uint64(iv[8:])
		m, err := NewLRW(newAES(t, key[:len(key)-16]), key[len(key)-16:], IVPlain64BE, len(pt))
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(pt))
		m.Encrypt(got, pt, first)
		if !bytes.Equal(got, ct) {
			t.Errorf("%s: encrypt\n got %x\nwant %x", v["Name"], got, ct)
		}
		m.Decrypt(got, got, first)
		if !bytes.Equal(got, pt) {
			t.Errorf("%s: in-place decrypt does not invert", v["Name"])
		}
	}
}

// refGFMulBBE multiplies two 16-byte blocks in GF(2^128) as the kernel's
// gf128mul_bbe does, bit by bit: a block is a big-endian integer whose bit
// k is the coefficient of x^k, reduced by x^128 = x^7+x^2+x+1.
func refGFMulBBE(a, b [16]byte) [16]byte {
	var r [16]byte
	for k := 0; k < 128; k++ { // r += a·x^k if bit k of b is set
		if b[15-k/8]>>(k%8)&1 == 1 {
			for i := range r {
				r[i] ^= a[i]
			}
		}
		// a = a·x
		carry := a[0] >> 7
		for i := 0; i < 15; i++ {
			a[i] = a[i]<<1 | a[i+1]>>7
		}
		a[15] <<= 1
		if carry == 1 {
			a[15] ^= 0x87
		}
	}
	return r
}

// refInc adds 1 to a 128-bit big-endian integer.
func refInc(b *[16]byte) {
	for i := 15; i >= 0; i-- {
		b[i]++
		if b[i] != 0 {
			return
		}
	}
}

// refLRW encrypts a run with LRW computed straight from its definition:
// every block gets T = I·K2 from a full multiplication.
func refLRW(c cipher.Block, k2 [16]byte, ivs []byte, pt []byte, sectorSize int) []byte {
	out := make([]byte, len(pt))
	for s := 0; s*sectorSize < len(pt); s++ {
		var idx [16]byte
		copy(idx[:], ivs[16*s:])
		for j := 0; j < sectorSize; j += 16 {
			o := s*sectorSize + j
			tw := refGFMulBBE(k2, idx)
			var x [16]byte
			for k := range x {
				x[k] = pt[o+k] ^ tw[k]
			}
			c.Encrypt(x[:], x[:])
			for k := range x {
				out[o+k] = x[k] ^ tw[k]
			}
			refInc(&idx)
		}
	}
	return out
}

// fixedIV hands every sector the same IV, to reach indices no sector
// number reaches (all ones, wrapping to zero).
type fixedIV [16]byte

func (f fixedIV) IVs(dst []byte, ivSize int, first uint64) {
	for i := 0; i < len(dst); i += ivSize {
		copy(dst[i:], f[:])
	}
}

// TestLRWMatchesReference compares runs against refLRW for lrw-benbi and
// lrw-plain64 (whose little-endian IV the kernel reads big-endian), with
// indices that carry across the 64-bit halves and wrap past 2^128.
func TestLRWMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	key := make([]byte, 48)
	fill(rng, key)
	var k2 [16]byte
	copy(k2[:], key[32:])
	ref, _ := aes.NewCipher(key[:32])
	allOnes := fixedIV{}
	for i := range allOnes {
		allOnes[i] = 0xff
	}
	allOnes[15] = 0xf0 // 15 blocks below the wrap
	gens := map[string]IVGenerator{
		"benbi": IVBenbi, "plain64": IVPlain64, "plain64be": IVPlain64BE, "wrap": allOnes,
	}
	for name, gen := range gens {
		for _, ss := range []int{16, 512, 4096} {
			m, err := NewLRW(newAES(t, key[:32]), key[32:], gen, ss)
			if err != nil {
				t.Fatal(err)
			}
			for _, first := range []uint64{0, 1, 1<<32 + 7, math.MaxUint64 - 1, rng.Uint64()} {
				n := 1 + rng.IntN(40)
				pt := make([]byte, n*ss)
				fill(rng, pt)
				ivs := make([]byte, 16*n)
				gen.IVs(ivs, 16, first)
				want := refLRW(ref, k2, ivs, pt, ss)
				got := make([]byte, len(pt))
				m.Encrypt(got, pt, first)
				if !bytes.Equal(got, want) {
					t.Fatalf("lrw-%s %d: %d sectors from %d differ from the reference", name, ss, n, first)
				}
				m.Decrypt(got, got, first)
				if !bytes.Equal(got, pt) {
					t.Fatalf("lrw-%s %d: decrypt does not invert", name, ss)
				}
			}
		}
	}
}

func TestLRWRejects(t *testing.T) {
	a := newAES(t, make([]byte, 16))
	if _, err := NewLRW(a, make([]byte, 15), IVBenbi, 512); err == nil {
		t.Error("15-byte tweak key accepted")
	}
	if _, err := NewLRW(stdBlock{mustDES3(t)}, make([]byte, 16), IVBenbi, 512); err == nil {
		t.Error("8-byte block cipher accepted")
	}
	if _, err := NewLRW(a, make([]byte, 16), IVBenbi, 500); err == nil {
		t.Error("sector size 500 accepted")
	}
}
