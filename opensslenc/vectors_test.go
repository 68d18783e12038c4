package opensslenc

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

type modeVector struct {
	cipher      string
	key, iv     []byte
	plain, ciph []byte
}

// loadModeVectors reads testdata/modes.txt (sources in its header).
func loadModeVectors(t *testing.T) []modeVector {
	f, err := os.Open("testdata/modes.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []modeVector
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) != 5 {
			t.Fatalf("bad line %q", line)
		}
		dec := func(s string) []byte {
			if s == "-" {
				return []byte{}
			}
			b, err := hex.DecodeString(s)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			return b
		}
		vs = append(vs, modeVector{fs[0], dec(fs[1]), dec(fs[2]), dec(fs[3]), dec(fs[4])})
	}
	if len(vs) < 13 {
		t.Fatalf("only %d vectors", len(vs))
	}
	return vs
}

// TestModeVectors runs the published vectors through each mode in both
// directions, whole and in two calls (a granule, then the rest), the way
// Run feeds the modes (whole blocks before the last call; whole 64-byte
// blocks for ChaCha20).
func TestModeVectors(t *testing.T) {
	for _, v := range loadModeVectors(t) {
		c, err := LookupCipher(v.cipher)
		if err != nil {
			t.Fatal(err)
		}
		for _, split := range []int{len(v.plain), 32, granule} {
			if split > len(v.plain) || (c.Name == "chacha20" && split%64 != 0) {
				continue
			}
			for _, decrypt := range []bool{false, true} {
				tr, err := c.newTransform(v.key, v.iv, decrypt)
				if err != nil {
					t.Fatal(err)
				}
				in, want := v.plain, v.ciph
				if decrypt {
					in, want = v.ciph, v.plain
				}
				got := make([]byte, len(in))
				tr.crypt(got[:split], in[:split])
				tr.crypt(got[split:], in[split:])
				if !bytes.Equal(got, want) {
					t.Errorf("%s decrypt=%v split=%d:\n got %x\nwant %x", v.cipher, decrypt, split, got, want)
				}
			}
		}
	}
}
