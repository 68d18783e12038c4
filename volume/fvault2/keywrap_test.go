package fvault2

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

func TestKeyWrapVectors(t *testing.T) {
	f, err := os.Open("testdata/keywrap-vectors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		var v [3][]byte
		for i, s := range strings.Fields(line) {
			if v[i], err = hex.DecodeString(s); err != nil {
				t.Fatal(err)
			}
		}
		kek, key, wrapped := v[0], v[1], v[2]
		if got, err := wrapKey(kek, key); err != nil || !bytes.Equal(got, wrapped) {
			t.Errorf("vector %d: wrap %x, %v", n, got, err)
		}
		if got, err := unwrapKey(kek, wrapped); err != nil || !bytes.Equal(got, key) {
			t.Errorf("vector %d: unwrap %x, %v", n, got, err)
		}
		for bit := 0; bit < 8*len(wrapped); bit++ {
			bad := append([]byte(nil), wrapped...)
			bad[bit/8] ^= 1 << (bit % 8)
			if _, err := unwrapKey(kek, bad); err == nil {
				t.Fatalf("vector %d: unwrapped with bit %d flipped", n, bit)
			}
		}
		n++
	}
	if n != 6 {
		t.Fatalf("%d vectors, want 6", n)
	}
}
