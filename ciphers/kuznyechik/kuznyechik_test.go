package kuznyechik

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"
)

// TestTransforms checks the byte-level S, R and L (from which the lookup
// tables are built) and their inverses against RFC 7801 5.1-5.3.
func TestTransforms(t *testing.T) {
	initTables() // for piInv
	for _, v := range readVectors(t, "rfc7801_transforms.txt") {
		want := v.f["out"]
		for name, in := range v.f {
			if name == "out" {
				continue
			}
			var b [16]byte
			copy(b[:], in)
			switch name {
			case "S":
				transformS(&b)
			case "R":
				transformR(&b)
			case "L":
				transformL(&b)
			default:
				t.Fatalf("%s:%d: unknown transform %q", v.file, v.line, name)
			}
			if !bytes.Equal(b[:], want) {
				t.Errorf("%s(%x) = %x, want %x", name, in, b, want)
			}
			switch name {
			case "S":
				for i := range b {
					b[i] = piInv[b[i]]
				}
			case "R":
				transformRInv(&b)
			case "L":
				transformLInv(&b)
			}
			if !bytes.Equal(b[:], in) {
				t.Errorf("%s^-1(%s(%x)) = %x", name, name, in, b)
			}
		}
	}
}

// TestTables checks the lookup tables against the byte-level definitions on
// random blocks: ls = L(S(x)), ils = L^-1(S^-1(x)), lInv = L^-1.
func TestTables(t *testing.T) {
	initTables()
	for n := 0; n < 1000; n++ {
		var x [16]byte
		rand.Read(x[:])
		ref := x
		transformS(&ref)
		transformL(&ref)
		if got := ls(toBlock(&x)); got != toBlock(&ref) {
			t.Fatalf("ls(%x) wrong", x)
		}
		ref = x
		for i := range ref {
			ref[i] = piInv[ref[i]]
		}
		transformLInv(&ref)
		if got := ils(toBlock(&x)); got != toBlock(&ref) {
			t.Fatalf("ils(%x) wrong", x)
		}
		ref = x
		transformLInv(&ref)
		if got := lInv(toBlock(&x)); got != toBlock(&ref) {
			t.Fatalf("lInv(%x) wrong", x)
		}
	}
}

// TestKeySchedule checks C1..C8 and K1..K10 against RFC 7801 5.4.
func TestKeySchedule(t *testing.T) {
	initTables()
	v := readVectors(t, "rfc7801_keyschedule.txt")[0]
	for i := 1; i <= 8; i++ {
		var got [16]byte
		storeBlock(got[:], roundConstant(i))
		if want := v.f[fmt.Sprintf("c%d", i)]; !bytes.Equal(got[:], want) {
			t.Errorf("C%d = %x, want %x", i, got, want)
		}
	}
	c, err := New(v.f["key"])
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		var got [16]byte
		storeBlock(got[:], c.enc[i-1])
		if want := v.f[fmt.Sprintf("k%d", i)]; !bytes.Equal(got[:], want) {
			t.Errorf("K%d = %x, want %x", i, got, want)
		}
	}
}

func TestECBVectors(t *testing.T) {
	for _, v := range readVectors(t, "ecb.txt") {
		key, plain, want := v.f["key"], v.f["plain"], v.f["cipher"]
		c, err := New(key)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(plain))
		c.EncryptBlocks(got, plain)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:%d: encrypt = %x, want %x", v.file, v.line, got, want)
		}
		c.DecryptBlocks(got, got)
		if !bytes.Equal(got, plain) {
			t.Errorf("%s:%d: decrypt = %x, want %x", v.file, v.line, got, plain)
		}
	}
}

// TestAgainstReference compares the table-driven cipher, on random keys and
// multi-block buffers of odd block counts, with a direct transcription of
// RFC 7801's definition built from the byte-level S and L.
func TestAgainstReference(t *testing.T) {
	for n := 0; n < 20; n++ {
		key := make([]byte, 32)
		rand.Read(key)
		c, _ := New(key)
		src := make([]byte, 16*(1+2*n))
		rand.Read(src)
		got := make([]byte, len(src))
		c.EncryptBlocks(got, src)
		for i := 0; i < len(src); i += 16 {
			var b [16]byte
			copy(b[:], src[i:])
			for r := 0; r < 9; r++ {
				var k [16]byte
				storeBlock(k[:], c.enc[r])
				for j := range b {
					b[j] ^= k[j]
				}
				transformS(&b)
				transformL(&b)
			}
			var k [16]byte
			storeBlock(k[:], c.enc[9])
			for j := range b {
				b[j] ^= k[j]
			}
			if !bytes.Equal(b[:], got[i:i+16]) {
				t.Fatalf("block %d differs from the reference", i/16)
			}
		}
		back := make([]byte, len(src))
		c.DecryptBlocks(back, got)
		if !bytes.Equal(back, src) {
			t.Fatal("decrypt(encrypt(x)) != x")
		}
	}
}

func TestKeySizes(t *testing.T) {
	for n := 0; n <= 40; n++ {
		_, err := New(make([]byte, n))
		if (err == nil) != (n == 32) {
			t.Errorf("New(%d-byte key): err = %v", n, err)
		}
	}
}

func TestNoAllocations(t *testing.T) {
	c, _ := New(make([]byte, 32))
	buf := make([]byte, 4096+16)
	if n := testing.AllocsPerRun(10, func() {
		c.EncryptBlocks(buf, buf)
		c.DecryptBlocks(buf, buf)
	}); n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}

func TestBadLengthsPanic(t *testing.T) {
	c, _ := New(make([]byte, 32))
	for _, tc := range []struct{ dst, src int }{{15, 15}, {16, 32}, {17, 17}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("dst %d, src %d: no panic", tc.dst, tc.src)
				}
			}()
			c.DecryptBlocks(make([]byte, tc.dst), make([]byte, tc.src))
		}()
	}
}
