package sector

import (
	"bytes"
	"crypto/sha256"
	"testing"
)

// funcIV is an IVGenerator outside this package's own types.
type funcIV func(dst []byte, ivSize int, first uint64)

func (f funcIV) IVs(dst []byte, ivSize int, first uint64) { f(dst, ivSize, first) }

// TestStride: the strided generator's IV for sector n is the generator's
// IV for n*stride, for every keyless generator, ESSIV and a foreign one.
func TestStride(t *testing.T) {
	essiv, err := ESSIV(newAESBlock, sha256.New(), make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	gens := map[string]IVGenerator{
		"plain": IVPlain, "plain64": IVPlain64, "plain64be": IVPlain64BE, "benbi": IVBenbi, "null": IVNull,
		"essiv": essiv, "foreign": funcIV(IVPlain64.IVs),
	}
	for name, g := range gens {
		for _, ivSize := range []int{16, 32} {
			if name == "essiv" && ivSize != 16 {
				continue
			}
			for _, stride := range []uint64{1, 2, 8} {
				s := Stride(g, stride)
				if err := checkIV(s, ivSize); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				const first, n = 1<<32 - 3, 7
				got := make([]byte, n*ivSize)
				s.IVs(got, ivSize, first)
				for i := 0; i < n; i++ {
					want := make([]byte, ivSize)
					g.IVs(want, ivSize, (first+uint64(i))*stride)
					if !bytes.Equal(got[i*ivSize:(i+1)*ivSize], want) {
						t.Fatalf("%s, stride %d, %d-byte IVs: IV %d is %x, want %x", name, stride, ivSize, i, got[i*ivSize:(i+1)*ivSize], want)
					}
				}
			}
		}
	}
	if Stride(IVPlain64, 1) != IVGenerator(IVPlain64) {
		t.Error("Stride 1 is not the generator itself")
	}
}
