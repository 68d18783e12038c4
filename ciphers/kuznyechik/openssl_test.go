package kuznyechik

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"testing"
)

// TestAgainstOpenSSLGost compares random keys and data with kuznyechik-ecb of
// the GOST provider for OpenSSL 3 (Debian package libengine-gost-openssl),
// an independent implementation. Skipped where it is not installed.
func TestAgainstOpenSSLGost(t *testing.T) {
	run := func(key, data []byte) ([]byte, error) {
		cmd := exec.Command("openssl", "enc", "-provider", "gostprov", "-provider", "default",
			"-kuznyechik-ecb", "-nopad", "-K", hex.EncodeToString(key))
		cmd.Stdin = bytes.NewReader(data)
		return cmd.Output()
	}
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed; differential test not run")
	}
	if _, err := run(make([]byte, 32), make([]byte, 16)); err != nil {
		t.Skipf("openssl has no kuznyechik-ecb (install libengine-gost-openssl): %v", err)
	}
	for i := 0; i < 5; i++ {
		key := make([]byte, 32)
		data := make([]byte, 16*(1+i*23))
		rand.Read(key)
		rand.Read(data)
		want, err := run(key, data)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := New(key)
		got := make([]byte, len(data))
		c.EncryptBlocks(got, data)
		if !bytes.Equal(got, want) {
			t.Fatalf("key %x: differs from openssl's GOST provider", key)
		}
		c.DecryptBlocks(got, got)
		if !bytes.Equal(got, data) {
			t.Fatal("decrypt(encrypt(x)) != x")
		}
	}
}
