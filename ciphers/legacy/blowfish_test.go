package legacy

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	xblowfish "golang.org/x/crypto/blowfish"
)

func blowfishVectors(t *testing.T) []vector {
	var out []vector
	for _, v := range append(readVectors(t, "blowfish_ecb.txt"), readVectors(t, "blowfish_setkey.txt")...) {
		if len(v.f["key"]) < BlowfishMinKeySize {
			continue // 1- to 3-byte keys: outside the accepted range
		}
		out = append(out, v)
	}
	return out
}

func TestBlowfishBEVectors(t *testing.T) {
	vs := blowfishVectors(t)
	if len(vs) != 34+21 {
		t.Fatalf("%d vectors, want 55", len(vs))
	}
	for _, v := range vs {
		c, err := NewBlowfishBE(v.f["key"])
		if err != nil {
			t.Fatal(err)
		}
		checkKAT(t, c, v)
	}
}

// TestBlowfishLEDerived checks TrueCrypt's little-endian Blowfish against
// values DERIVED from Schneier's big-endian vectors, not against published
// little-endian vectors (none were found): by definition, Blowfish-LE of a
// block equals Blowfish-BE of the block with each 32-bit half byte-reversed,
// with the output's halves byte-reversed back, under the same key. The
// definition itself is checked independently by TestTrueCryptVolumeHeaders
// on real TrueCrypt Blowfish volumes.
func TestBlowfishLEDerived(t *testing.T) {
	for _, v := range blowfishVectors(t) {
		c, err := NewBlowfishLE(v.f["key"])
		if err != nil {
			t.Fatal(err)
		}
		d := vector{file: v.file, line: v.line, f: map[string][]byte{
			"plain":  reverseHalves(v.f["plain"]),
			"cipher": reverseHalves(v.f["cipher"]),
		}}
		checkKAT(t, c, d)
	}
}

func reverseHalves(b []byte) []byte {
	out := make([]byte, len(b))
	for i := 0; i < len(b); i += 4 {
		out[i], out[i+1], out[i+2], out[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return out
}

// TestBlowfishAgainstXCrypto compares this package's Blowfish (its own
// pi tables and key schedule, four blocks at a time) with
// golang.org/x/crypto/blowfish, an independent implementation, for every
// accepted key length and batches that leave a tail of 1 to 3 blocks.
func TestBlowfishAgainstXCrypto(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := BlowfishMinKeySize; n <= BlowfishMaxKeySize; n++ {
		key := make([]byte, n)
		for i := range key {
			key[i] = byte(rng.Uint32())
		}
		mine, err := NewBlowfishBE(key)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := xblowfish.NewCipher(key)
		if err != nil {
			t.Fatal(err)
		}
		src := make([]byte, 8*(4*3+n%4))
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		matchesReference(t, fmt.Sprintf("%d-byte key", n), mine, ref, src)
		got := make([]byte, len(src))
		mine.EncryptBlocks(got, src)
		mine.DecryptBlocks(got, got)
		if !bytes.Equal(got, src) {
			t.Fatalf("%d-byte key: decrypt(encrypt(x)) != x", n)
		}
	}
}
