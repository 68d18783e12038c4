package legacy

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"

	"golang.org/x/crypto/cast5"
)

func TestCAST5Vectors(t *testing.T) {
	for _, v := range readVectors(t, "cast5_rfc2144.txt") {
		c, err := NewCAST5(v.f["key"])
		if err != nil {
			t.Fatal(err)
		}
		checkKAT(t, c, v)
	}
}

// TestCAST5Maintenance runs RFC 2144's full maintenance test: two million
// key schedules and four million block encryptions chained together.
func TestCAST5Maintenance(t *testing.T) {
	if testing.Short() {
		t.Skip("long-running; skipped in -short mode")
	}
	v := readVectors(t, "cast5_maintenance.txt")[0]
	a := append([]byte(nil), v.f["a"]...)
	b := append([]byte(nil), v.f["b"]...)
	for i := 0; i < 1000000; i++ {
		kb, _ := NewCAST5(b)
		kb.EncryptBlocks(a, a) // aL and aR under b
		ka, _ := NewCAST5(a)
		ka.EncryptBlocks(b, b) // bL and bR under the new a
	}
	if !bytes.Equal(a, v.f["aFinal"]) || !bytes.Equal(b, v.f["bFinal"]) {
		t.Fatalf("a = %X, b = %X; want %X, %X", a, b, v.f["aFinal"], v.f["bFinal"])
	}
}

// TestCAST5AgainstXCrypto compares 128-bit-key CAST5 with
// golang.org/x/crypto/cast5, an independent implementation.
func TestCAST5AgainstXCrypto(t *testing.T) {
	for n := 0; n < 200; n++ {
		key := make([]byte, 16)
		src := make([]byte, 64)
		rand.Read(key)
		rand.Read(src)
		mine, _ := NewCAST5(key)
		ref, err := cast5.NewCipher(key)
		if err != nil {
			t.Fatal(err)
		}
		matchesReference(t, fmt.Sprintf("key %X", key), mine, ref, src)
	}
}
