package aes

import (
	"testing"
)

func TestSBoxCircuit(t *testing.T) {
	// FIPS-197 section 5.1.1 example and Figure 7 entries.
	for in, out := range map[byte]byte{0x53: 0xed, 0x00: 0x63, 0x01: 0x7c, 0xff: 0x16, 0x10: 0xca} {
		if got := sbox(in); got != out {
			t.Errorf("sbox(%#x) = %#x, want %#x", in, got, out)
		}
	}
	// All 256 inputs through the bitsliced circuits, four values per plane
	// position at once, against the definition-based sbox.
	for base := 0; base < 256; base += 64 {
		var src [64]byte
		for i := range src {
			src[i] = byte(base + i)
		}
		var q state
		q.load(src[:], nil)
		subBytes(&q)
		var out [64]byte
		q.store(out[:], nil)
		for i := range out {
			if want := sbox(src[i]); out[i] != want {
				t.Fatalf("circuit S(%#x) = %#x, want %#x", src[i], out[i], want)
			}
		}
		q.load(out[:], nil)
		invSubBytes(&q)
		q.store(out[:], nil)
		if out != src {
			t.Fatalf("inverse circuit does not invert")
		}
	}
}

func TestBitsliceRoundTrip(t *testing.T) {
	var src [64]byte
	for i := range src {
		src[i] = byte(i*37 + 11)
	}
	var q state
	q.load(src[:], nil)
	var out [64]byte
	q.store(out[:], nil)
	if out != src {
		t.Fatal("store(load(x)) != x")
	}
	// Plane 0 must hold bit 0 of each byte at bit 16r+4c+b.
	for b := 0; b < 4; b++ {
		for c := 0; c < 4; c++ {
			for r := 0; r < 4; r++ {
				want := uint64(src[16*b+4*c+r] & 1)
				if got := q[0] >> (16*r + 4*c + b) & 1; got != want {
					t.Fatalf("layout: block %d row %d col %d wrong", b, r, c)
				}
			}
		}
	}
}

func TestKeySizes(t *testing.T) {
	for _, n := range []int{0, 1, 15, 17, 23, 31, 33, 64} {
		if _, err := New(make([]byte, n)); err == nil {
			t.Errorf("New accepted a %d-byte key", n)
		}
	}
	for _, n := range []int{16, 24, 32} {
		c, err := New(make([]byte, n))
		if err != nil || c.BlockSize() != 16 {
			t.Errorf("New(%d bytes) failed: %v", n, err)
		}
	}
}

func TestImplementationName(t *testing.T) {
	want := supportedImpls()[0].String()
	if got := Implementation(); got != want {
		t.Errorf("Implementation() = %q, want %q", got, want)
	}
	t.Logf("implementation: %s (supported: %v)", Implementation(), supportedImpls())
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", name)
		}
	}()
	f()
}

func TestBadLengthsPanic(t *testing.T) {
	c, _ := New(make([]byte, 32))
	b := make([]byte, 64)
	mustPanic(t, "partial block", func() { c.EncryptBlocks(b, b[:17]) })
	mustPanic(t, "short dst", func() { c.DecryptBlocks(b[:16], b[:32]) })
	mustPanic(t, "sector size", func() { c.EncryptXTS(b, b[:40], b[:16], 40) })
	mustPanic(t, "tweak count", func() { c.EncryptXTS(b, b[:64], b[:32], 64) })
	mustPanic(t, "short xts dst", func() { c.DecryptXTS(b[:32], b[:64], b[:16], 64) })
}

func TestNoAllocations(t *testing.T) {
	forEachImpl(t, func(t *testing.T, impl implementation) {
		c, _ := newWithImpl(make([]byte, 32), impl)
		k2, _ := newWithImpl(make([]byte, 32), impl)
		buf := make([]byte, 4096)
		tweaks := make([]byte, 16*8)
		for name, f := range map[string]func(){
			"EncryptBlocks":     func() { c.EncryptBlocks(buf, buf) },
			"DecryptBlocks":     func() { c.DecryptBlocks(buf, buf) },
			"EncryptXTS":        func() { c.EncryptXTS(buf, buf, tweaks, 512) },
			"DecryptXTS":        func() { c.DecryptXTS(buf, buf, tweaks, 512) },
			"EncryptXTSPlain64": func() { c.EncryptXTSPlain64(buf, buf, k2, 1<<40, 512) },
			"DecryptXTSPlain64": func() { c.DecryptXTSPlain64(buf, buf, k2, 1<<40, 4096) },
		} {
			if n := testing.AllocsPerRun(20, f); n != 0 {
				t.Errorf("%s allocates %.1f times per call", name, n)
			}
		}
	})
}

func TestZero(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	c, _ := newWithImpl(key, implGeneric)
	c.Zero()
	if c.enc != (roundKeys{}) || c.dec != (roundKeys{}) || c.bsEnc != ([maxRounds + 1]state{}) || c.bsDec != ([maxRounds + 1]state{}) {
		t.Fatal("Zero left key material")
	}
}
