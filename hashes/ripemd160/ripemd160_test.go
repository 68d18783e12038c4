package ripemd160

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"encoding/hex"
	"hash"
	"os"
	"strings"
	"testing"

	xripemd "golang.org/x/crypto/ripemd160"

	"github.com/cryptvol/cryptvol/hashes/internal/hashtest"
)

func TestBosselaersVectors(t *testing.T) {
	for _, v := range hashtest.ReadVectors(t, "testdata/bosselaers.txt") {
		if got := Sum(v.Message); !bytes.Equal(got[:], v.Digest) {
			t.Errorf("line %d (len %d): got %x, want %x", v.Line, len(v.Message), got, v.Digest)
		}
	}
}

func TestHMACRFC2286(t *testing.T) {
	f, err := os.Open("testdata/rfc2286.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var fs [3][]byte
		for i, s := range strings.Split(line, "|") {
			if fs[i], err = hex.DecodeString(s); err != nil {
				t.Fatal(err)
			}
		}
		m := hmac.New(func() hash.Hash { return New() }, fs[0])
		m.Write(fs[1])
		if got := m.Sum(nil); !bytes.Equal(got, fs[2]) {
			t.Errorf("case %d: got %x, want %x", n+1, got, fs[2])
		}
		n++
	}
	if n != 7 {
		t.Fatalf("read %d cases, want 7", n)
	}
}

// TestAgainstXCrypto compares with golang.org/x/crypto/ripemd160, an
// independent implementation, on messages around every block boundary.
func TestAgainstXCrypto(t *testing.T) {
	msg := make([]byte, 600)
	for i := range msg {
		msg[i] = byte(i*7 + 3)
	}
	for n := 0; n <= len(msg); n++ {
		x := xripemd.New()
		x.Write(msg[:n])
		if got, want := Sum(msg[:n]), x.Sum(nil); !bytes.Equal(got[:], want) {
			t.Fatalf("len %d: got %x, x/crypto %x", n, got, want)
		}
	}
}

func TestHashContract(t *testing.T) {
	hashtest.CheckStreaming(t, func() hash.Hash { return New() })
}

func BenchmarkRIPEMD160(b *testing.B) { hashtest.BenchHash(b, New(), 8192) }

func BenchmarkXCryptoRIPEMD160(b *testing.B) { hashtest.BenchHash(b, xripemd.New(), 8192) }
