package bitlk

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	if s == "-" {
		return nil
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCCMVectors checks seal and open against SP 800-38C, RFC 3610 and a
// vector of BitLocker's shape; every single-bit change of the ciphertext,
// tag or nonce must fail authentication and leave nothing decrypted.
func TestCCMVectors(t *testing.T) {
	f, err := os.Open("testdata/ccm-vectors.txt")
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
		fl := strings.Fields(line)
		key, nonce, ad, plain := unhex(t, fl[0]), unhex(t, fl[1]), unhex(t, fl[2]), unhex(t, fl[3])
		tagLen, _ := strconv.Atoi(fl[4])
		want := unhex(t, fl[5])
		c, err := newCCM(key, len(nonce), tagLen)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.seal(nonce, plain, ad); !bytes.Equal(got, want) {
			t.Errorf("vector %d: seal\n got %x\nwant %x", n, got, want)
		}
		out := make([]byte, len(plain))
		if err := c.open(out, nonce, want, ad); err != nil || !bytes.Equal(out, plain) {
			t.Errorf("vector %d: open: %v, %x", n, err, out)
		}
		for bit := 0; bit < 8*len(want); bit++ {
			bad := append([]byte(nil), want...)
			bad[bit/8] ^= 1 << (bit % 8)
			if err := c.open(out, nonce, bad, ad); err == nil || !bytes.Equal(out, make([]byte, len(out))) {
				t.Fatalf("vector %d: flipped bit %d opened (%v) or left plaintext", n, bit, err)
			}
		}
		badNonce := append([]byte(nil), nonce...)
		badNonce[0] ^= 1
		if c.open(out, badNonce, want, ad) == nil {
			t.Fatalf("vector %d: opened with another nonce", n)
		}
		n++
	}
	if n != 6 {
		t.Fatalf("%d vectors, want 6", n)
	}
}

// TestOpenKeyLayout checks the BitLocker datum layout (nonce, tag, then
// ciphertext) against the last vector of the file.
func TestOpenKeyLayout(t *testing.T) {
	key := unhex(t, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	sealed := unhex(t, "a917fb7dde03fe5b9e0e72262d66466cedc2ffea7280ac30f11fb1293f1506d7fda75433a8aa7728d2eb3ac0e5dcb7f22dcce3ccf397358c29ac4d8f")
	datum := append(unhex(t, "0c0b0a090807060504030201"), sealed[len(sealed)-16:]...)
	datum = append(datum, sealed[:len(sealed)-16]...)
	d, err := parseCCM(datum)
	if err != nil {
		t.Fatal(err)
	}
	got, err := openKey(key, d)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range got {
		if int(b) != i {
			t.Fatalf("openKey gave %x", got)
		}
	}
	key[0] ^= 1
	if _, err := openKey(key, d); err == nil {
		t.Fatal("opened with a wrong key")
	}
}
