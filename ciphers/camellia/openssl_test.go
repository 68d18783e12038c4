package camellia

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os/exec"
	"testing"
)

// TestAgainstOpenSSL compares random keys and data with the openssl CLI's
// camellia-{128,192,256}-ecb, an independent implementation.
func TestAgainstOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed; differential test not run")
	}
	forEachImplementation(t, func(t *testing.T) {
		for _, ks := range []int{16, 24, 32} {
			for i := 0; i < 3; i++ {
				key := make([]byte, ks)
				data := make([]byte, 16*(1+i*37))
				rand.Read(key)
				rand.Read(data)
				cmd := exec.Command("openssl", "enc", fmt.Sprintf("-camellia-%d-ecb", ks*8),
					"-nopad", "-K", hex.EncodeToString(key))
				cmd.Stdin = bytes.NewReader(data)
				want, err := cmd.Output()
				if err != nil {
					t.Fatalf("openssl: %v", err)
				}
				c, _ := New(key)
				got := make([]byte, len(data))
				c.EncryptBlocks(got, data)
				if !bytes.Equal(got, want) {
					t.Fatalf("key %x: differs from openssl", key)
				}
			}
		}
	})
}
