package camellia

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"
)

func TestPublishedVectors(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		for _, file := range []string{"rfc3713.txt", "nessie.txt", "ntt.txt", "veracrypt.txt"} {
			for _, v := range readVectors(t, file) {
				checkVector(t, v)
			}
		}
	})
}

func checkVector(t *testing.T, v vector) {
	t.Helper()
	key, plain, want := v.f["key"], v.f["plain"], v.f["cipher"]
	c, err := New(key)
	if err != nil {
		t.Fatalf("%s:%d: %v", v.file, v.line, err)
	}
	got := make([]byte, len(plain))
	c.EncryptBlocks(got, plain)
	if !bytes.Equal(got, want) {
		t.Errorf("%s:%d: encrypt = %x, want %x", v.file, v.line, got, want)
	}
	c.DecryptBlocks(got, got) // in place
	if !bytes.Equal(got, plain) {
		t.Errorf("%s:%d: decrypt = %x, want %x", v.file, v.line, got, plain)
	}
	if it, ok := v.f["iter100"]; ok {
		buf := append([]byte(nil), plain...)
		for i := 0; i < 100; i++ {
			c.EncryptBlocks(buf, buf)
		}
		if !bytes.Equal(buf, it) {
			t.Errorf("%s:%d: 100 encryptions = %x, want %x", v.file, v.line, buf, it)
		}
		for i := 0; i < 100; i++ {
			c.DecryptBlocks(buf, buf)
		}
		if !bytes.Equal(buf, plain) {
			t.Errorf("%s:%d: 100 decryptions = %x, want %x", v.file, v.line, buf, plain)
		}
	}
}

func TestKeySizes(t *testing.T) {
	for n := 0; n <= 40; n++ {
		_, err := New(make([]byte, n))
		valid := n == 16 || n == 24 || n == 32
		if (err == nil) != valid {
			t.Errorf("New(%d-byte key): err = %v, want valid=%v", n, err, valid)
		}
	}
}

// TestBlocksIndependent checks that a multi-block call equals block-by-block
// calls and that separate dst/src leave src untouched.
func TestBlocksIndependent(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		key := make([]byte, 32)
		rand.Read(key)
		c, _ := New(key)
		src := make([]byte, 16*67)
		rand.Read(src)
		orig := append([]byte(nil), src...)
		all := make([]byte, len(src))
		c.EncryptBlocks(all, src)
		if !bytes.Equal(src, orig) {
			t.Fatal("EncryptBlocks modified src")
		}
		one := make([]byte, 16)
		for i := 0; i < len(src); i += 16 {
			c.EncryptBlocks(one, src[i:i+16])
			if !bytes.Equal(one, all[i:i+16]) {
				t.Fatalf("block %d differs between batched and single calls", i/16)
			}
		}
		back := make([]byte, len(src))
		c.DecryptBlocks(back, all)
		if !bytes.Equal(back, src) {
			t.Fatal("decrypt(encrypt(x)) != x")
		}
	})
}

func TestNoAllocations(t *testing.T) {
	c, _ := New(make([]byte, 32))
	buf := make([]byte, 4096+9*16) // whole groups and a padded tail
	if n := testing.AllocsPerRun(10, func() {
		c.EncryptBlocks(buf, buf)
		c.DecryptBlocks(buf, buf)
	}); n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}

func TestBadLengthsPanic(t *testing.T) {
	c, _ := New(make([]byte, 16))
	for _, tc := range []struct{ dst, src int }{{15, 15}, {16, 32}, {17, 17}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("dst %d, src %d: no panic", tc.dst, tc.src)
				}
			}()
			c.EncryptBlocks(make([]byte, tc.dst), make([]byte, tc.src))
		}()
	}
}

// forEachImplementation runs f once per available code path.
func forEachImplementation(t *testing.T, f func(t *testing.T)) {
	for _, impl := range implementations() {
		t.Run(fmt.Sprint(impl.name), func(t *testing.T) {
			restore := impl.use()
			defer restore()
			f(t)
		})
	}
}
