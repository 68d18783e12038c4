package sector

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func xtsModes(t testing.TB, rng *rand.Rand, ss int) (aesXTS, twofishXTS Mode) {
	t.Helper()
	key := make([]byte, 128)
	fill(rng, key)
	a, err := NewXTS(newAES(t, key[:32]), newAES(t, key[32:64]), ss)
	if err != nil {
		t.Fatal(err)
	}
	tf, err := NewXTS(newTwofish(t, key[64:96]), newTwofish(t, key[96:]), ss)
	if err != nil {
		t.Fatal(err)
	}
	return a, tf
}

// TestCascadeIsSequential checks that a cascade equals applying its modes
// one after the other over the whole run (VeraCrypt's definition), for runs
// longer than Cascade's internal chunk, and that it decrypts.
func TestCascadeIsSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, ss := range []int{512, 4096} {
		a, tf := xtsModes(t, rng, ss)
		c := Cascade(tf, a) // VeraCrypt "AES-Twofish": Twofish first
		for _, n := range []int{1, 7, 2*chunkBytes/ss + 3} {
			first := rng.Uint64()
			pt := make([]byte, n*ss)
			fill(rng, pt)
			want := make([]byte, len(pt))
			tf.Encrypt(want, pt, first)
			a.Encrypt(want, want, first)
			got := make([]byte, len(pt))
			c.Encrypt(got, pt, first)
			if !bytes.Equal(got, want) {
				t.Fatalf("%d×%d: cascade differs from sequential encryption", n, ss)
			}
			c.Decrypt(got, got, first)
			if !bytes.Equal(got, pt) {
				t.Fatalf("%d×%d: cascade decrypt does not invert", n, ss)
			}
		}
	}
	a, _ := xtsModes(t, rng, 512)
	if Cascade(a) != a {
		t.Error("Cascade of one mode is not that mode")
	}
	b, _ := xtsModes(t, rng, 4096)
	mustPanic(t, "mixed sector sizes", func() { Cascade(a, b) })
	mustPanic(t, "no modes", func() { Cascade() })
}
