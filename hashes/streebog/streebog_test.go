package streebog

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"encoding/hex"
	"hash"
	"os"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/hashes/internal/hashtest"
)

func reversed(b []byte) []byte {
	r := make([]byte, len(b))
	for i := range b {
		r[i] = b[len(b)-1-i]
	}
	return r
}

// readFields returns the '|'-separated hex fields of each data line.
func readFields(t *testing.T, path string) [][][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var row [][]byte
		for i, s := range strings.Split(line, "|") {
			if i == 0 && strings.HasPrefix(s, "M") {
				continue // example name
			}
			b, err := hex.DecodeString(s)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			row = append(row, b)
		}
		out = append(out, row)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no vectors", path)
	}
	return out
}

func TestRFC6986Examples(t *testing.T) {
	for _, row := range readFields(t, "testdata/rfc6986.txt") {
		msg := reversed(row[0])
		want512, want256 := reversed(row[1]), reversed(row[2])
		if got := Sum512(msg); !bytes.Equal(got[:], want512) {
			t.Errorf("512: got %x, want %x", got, want512)
		}
		if got := Sum256(msg); !bytes.Equal(got[:], want256) {
			t.Errorf("256: got %x, want %x", got, want256)
		}
	}
}

func TestHMACStreebog512(t *testing.T) {
	for _, row := range readFields(t, "testdata/hmac_r50.1.113.txt") {
		m := hmac.New(func() hash.Hash { return New() }, row[0])
		m.Write(row[1])
		if got := m.Sum(nil); !bytes.Equal(got, row[2]) {
			t.Errorf("got %x, want %x", got, row[2])
		}
	}
}

func TestHashContract(t *testing.T) {
	hashtest.CheckStreaming(t, func() hash.Hash { return New() })
	hashtest.CheckStreaming(t, func() hash.Hash { return New256() })
}

func TestAgainstBotan(t *testing.T) {
	for _, m := range hashtest.RandomMessages() {
		if got, want := Sum512(m), hashtest.Botan(t, "Streebog-512", m); !bytes.Equal(got[:], want) {
			t.Fatalf("512 len %d: got %x, botan %x", len(m), got, want)
		}
		if got, want := Sum256(m), hashtest.Botan(t, "Streebog-256", m); !bytes.Equal(got[:], want) {
			t.Fatalf("256 len %d: got %x, botan %x", len(m), got, want)
		}
	}
}

func TestAddMod512Carries(t *testing.T) {
	a := [8]uint64{^uint64(0), ^uint64(0), 5}
	b := [8]uint64{1}
	addMod512(&a, &b)
	if a != [8]uint64{0, 0, 6} {
		t.Fatalf("carry chain: %x", a)
	}
	a = [8]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	addMod512(&a, &b)
	if a != [8]uint64{} {
		t.Fatalf("wrap modulo 2^512: %x", a)
	}
}

func BenchmarkStreebog512(b *testing.B) { hashtest.BenchHash(b, New(), 8192) }

// BenchmarkVsBotan: Streebog-512 throughput against botan's on the same
// 16 MiB, CPU time; e.g. -bench VsBotan -benchtime 3x.
func BenchmarkVsBotan(b *testing.B) { hashtest.BenchVsBotan(b, "Streebog-512", New()) }
