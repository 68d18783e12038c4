package legacy

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"testing"
)

// TestAgainstOpenSSL compares random keys and data with the openssl CLI
// (bf-ecb, cast5-ecb and des-ede3-ecb need OpenSSL 3's legacy provider).
// openssl enc only takes each cipher's default key length, so this covers
// 16-byte Blowfish and CAST5 keys and 24-byte Triple DES keys.
func TestAgainstOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed; differential test not run")
	}
	cases := []struct {
		name    string
		keySize int
		mk      func([]byte) (block, error)
	}{
		{"bf-ecb", 16, func(k []byte) (block, error) { return NewBlowfishBE(k) }},
		{"cast5-ecb", 16, func(k []byte) (block, error) { return NewCAST5(k) }},
		{"des-ede3-ecb", 24, func(k []byte) (block, error) { return NewTripleDES(k) }},
	}
	for _, tc := range cases {
		for i := 0; i < 3; i++ {
			key := make([]byte, tc.keySize)
			data := make([]byte, 8*(1+i*29))
			rand.Read(key)
			rand.Read(data)
			cmd := exec.Command("openssl", "enc", "-"+tc.name, "-nopad", "-K", hex.EncodeToString(key),
				"-provider", "legacy", "-provider", "default")
			cmd.Stdin = bytes.NewReader(data)
			want, err := cmd.Output()
			if err != nil {
				t.Skipf("openssl %s unavailable (legacy provider missing?): %v", tc.name, err)
			}
			c, err := tc.mk(key)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(data))
			c.EncryptBlocks(got, data)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s key %x: differs from openssl", tc.name, key)
			}
		}
	}
}
