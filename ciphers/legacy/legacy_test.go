package legacy

import (
	"bytes"
	"testing"
)

// block is the interface every cipher here implements (ciphers.Block; this
// package must not import ciphers).
type block interface {
	BlockSize() int
	EncryptBlocks(dst, src []byte)
	DecryptBlocks(dst, src []byte)
}

// checkKAT encrypts and decrypts one vector, out of place and in place.
func checkKAT(t *testing.T, c block, v vector) {
	t.Helper()
	plain, want := v.f["plain"], v.f["cipher"]
	got := make([]byte, len(plain))
	c.EncryptBlocks(got, plain)
	if !bytes.Equal(got, want) {
		t.Errorf("%s:%d: encrypt = %X, want %X", v.file, v.line, got, want)
	}
	c.DecryptBlocks(got, got)
	if !bytes.Equal(got, plain) {
		t.Errorf("%s:%d: decrypt = %X, want %X", v.file, v.line, got, plain)
	}
}

func TestKeySizes(t *testing.T) {
	for n := 0; n <= 64; n++ {
		key := make([]byte, n)
		_, errBE := NewBlowfishBE(key)
		_, errLE := NewBlowfishLE(key)
		_, errCAST := NewCAST5(key)
		_, err3DES := NewTripleDES(key)
		for _, c := range []struct {
			name  string
			err   error
			valid bool
		}{
			{"Blowfish-BE", errBE, n >= 4 && n <= 56},
			{"Blowfish-LE", errLE, n >= 4 && n <= 56},
			{"CAST5", errCAST, n >= 5 && n <= 16},
			{"Triple DES", err3DES, n == 24},
		} {
			if (c.err == nil) != c.valid {
				t.Errorf("%s with %d-byte key: err = %v, want valid=%v", c.name, n, c.err, c.valid)
			}
		}
	}
}

func allCiphers(t *testing.T) map[string]block {
	t.Helper()
	be, _ := NewBlowfishBE(make([]byte, 56))
	le, _ := NewBlowfishLE(make([]byte, 56))
	c5, _ := NewCAST5(make([]byte, 16))
	c5short, _ := NewCAST5([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) // 12 rounds
	d3, _ := NewTripleDES(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 2))
	return map[string]block{"Blowfish-BE": be, "Blowfish-LE": le, "CAST5": c5, "CAST5 (80-bit key)": c5short, "Triple DES": d3}
}

func TestNoAllocations(t *testing.T) {
	buf := make([]byte, 4096)
	for name, c := range allCiphers(t) {
		if n := testing.AllocsPerRun(5, func() {
			c.EncryptBlocks(buf, buf)
			c.DecryptBlocks(buf, buf)
		}); n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", name, n)
		}
	}
}

func TestBadLengthsPanic(t *testing.T) {
	for name, c := range allCiphers(t) {
		for _, tc := range []struct{ dst, src int }{{7, 7}, {8, 16}, {9, 9}} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: dst %d, src %d: no panic", name, tc.dst, tc.src)
					}
				}()
				c.EncryptBlocks(make([]byte, tc.dst), make([]byte, tc.src))
			}()
		}
	}
}

// TestMultiBlock checks that one call over many blocks equals one call per
// block, for every cipher (the ECB vectors are single blocks).
func TestMultiBlock(t *testing.T) {
	src := make([]byte, 8*37)
	for i := range src {
		src[i] = byte(i * 7)
	}
	for name, c := range allCiphers(t) {
		all := make([]byte, len(src))
		c.EncryptBlocks(all, src)
		one := make([]byte, 8)
		for i := 0; i < len(src); i += 8 {
			c.EncryptBlocks(one, src[i:i+8])
			if !bytes.Equal(one, all[i:i+8]) {
				t.Fatalf("%s: block %d differs between batched and single calls", name, i/8)
			}
		}
		c.DecryptBlocks(all, all)
		if !bytes.Equal(all, src) {
			t.Fatalf("%s: decrypt(encrypt(x)) != x", name)
		}
	}
}

// matchesReference encrypts src with c in one batched call and requires
// every block to equal what ref, an independent one-block implementation
// (x/crypto's), makes of it; what names the key in the failure message.
func matchesReference(t *testing.T, what string, c block, ref interface{ Encrypt(dst, src []byte) }, src []byte) {
	t.Helper()
	got := make([]byte, len(src))
	c.EncryptBlocks(got, src)
	want := make([]byte, BlockSize)
	for i := 0; i < len(src); i += BlockSize {
		ref.Encrypt(want, src[i:i+BlockSize])
		if !bytes.Equal(got[i:i+BlockSize], want) {
			t.Fatalf("%s, block %d: %X, x/crypto says %X", what, i/BlockSize, got[i:i+BlockSize], want)
		}
	}
}
