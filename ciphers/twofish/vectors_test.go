package twofish

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"testing"
)

// ivalCase is one key of testdata/ecb_ival.txt.
type ivalCase struct {
	keySize int
	key     []byte
	sboxKey []uint32 // one per 64 key bits, in file order (S_0 first)
	subkeys []uint32
	pt, ct  []byte
	states  map[int][4]uint32 // R[-1]..R[17]
	t       map[int][2]uint32 // t0, t1 printed with R[r]
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func mustWord(t *testing.T, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimSuffix(s, "."), 16, 32)
	if err != nil {
		t.Fatalf("bad word %q: %v", s, err)
	}
	return uint32(v)
}

func parseIval(t *testing.T) []*ivalCase {
	f, err := os.ReadFile("testdata/ecb_ival.txt")
	if err != nil {
		t.Fatal(err)
	}
	var cases []*ivalCase
	var cur *ivalCase
	inSubkeys := false
	sc := bufio.NewScanner(bytes.NewReader(f))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "KEYSIZE="):
			n, _ := strconv.Atoi(line[len("KEYSIZE="):])
			cur = &ivalCase{keySize: n, states: map[int][4]uint32{}, t: map[int][2]uint32{}}
			cases = append(cases, cur)
			inSubkeys = false
		case cur == nil:
		case strings.HasPrefix(line, "KEY="):
			cur.key = mustHex(t, line[4:])
		case strings.HasPrefix(line, "PT="):
			cur.pt = mustHex(t, line[3:])
			inSubkeys = false
		case strings.HasPrefix(line, "CT="):
			cur.ct = mustHex(t, line[3:])
		case strings.Contains(line, "-->") && !strings.Contains(line, "S-box key"):
			fields := strings.Fields(line)
			cur.sboxKey = append(cur.sboxKey, mustWord(t, fields[len(fields)-1]))
		case strings.Contains(line, "Subkeys"):
			inSubkeys = true
		case inSubkeys && strings.HasPrefix(line, ";") && len(strings.Fields(line)) >= 3:
			fields := strings.Fields(line)
			cur.subkeys = append(cur.subkeys, mustWord(t, fields[1]), mustWord(t, fields[2]))
		case strings.HasPrefix(line, "R["):
			end := strings.Index(line, "]")
			r, err := strconv.Atoi(strings.TrimSpace(line[2:end]))
			if err != nil {
				t.Fatalf("bad round line %q", line)
			}
			fields := strings.Fields(strings.TrimPrefix(line[end+1:], ":"))
			// fields: "x=" w0 w1 w2 w3 [t0=.. t1=..]
			var st [4]uint32
			for i := range st {
				st[i] = mustWord(t, fields[1+i])
			}
			cur.states[r] = st
			if len(fields) >= 7 {
				cur.t[r] = [2]uint32{
					mustWord(t, strings.TrimPrefix(fields[5], "t0=")),
					mustWord(t, strings.TrimPrefix(fields[6], "t1=")),
				}
			}
		}
	}
	if len(cases) != 3 {
		t.Fatalf("parsed %d intermediate-value cases, want 3", len(cases))
	}
	for _, c := range cases {
		if len(c.key)*8 != c.keySize || len(c.sboxKey) != c.keySize/64 || len(c.subkeys) != 40 ||
			len(c.states) != 19 || len(c.t) != 16 || len(c.pt) != 16 || len(c.ct) != 16 {
			t.Fatalf("incomplete intermediate-value case for %d-bit key", c.keySize)
		}
	}
	return cases
}

// TestIntermediateValues checks the key schedule and every round of the
// paper's intermediate-value tests, using a round-by-round encryption
// written straight from the paper with the unfused h function.
func TestIntermediateValues(t *testing.T) {
	for _, iv := range parseIval(t) {
		c, err := newWithKernel(iv.key, kernelGeneric)
		if err != nil {
			t.Fatal(err)
		}
		k := len(iv.key) / 8
		l := sboxKey(iv.key)
		for i, want := range iv.sboxKey {
			if got := l[k-1-i]; got != want {
				t.Errorf("%d-bit key: S-box key word S_%d = %08X, want %08X", iv.keySize, i, got, want)
			}
		}
		for i, want := range iv.subkeys {
			if c.k[i] != want {
				t.Errorf("%d-bit key: K_%d = %08X, want %08X", iv.keySize, i, c.k[i], want)
			}
		}
		// The fused tables must agree with h(X, S) of the paper.
		for x := uint32(0); x < 256; x++ {
			// Each byte position sees every value: x, x+1, x+2, x+3.
			in := x | (x+1)&0xFF<<8 | (x+2)&0xFF<<16 | (x+3)&0xFF<<24
			got := c.s[0][uint8(in)] ^ c.s[1][uint8(in>>8)] ^ c.s[2][uint8(in>>16)] ^ c.s[3][in>>24]
			if want := h(in, l[:k]); got != want {
				t.Fatalf("%d-bit key: fused tables give %08X for X=%08X, h gives %08X", iv.keySize, got, in, want)
			}
		}

		var w [4]uint32
		for i := range w {
			w[i] = binary.LittleEndian.Uint32(iv.pt[4*i:])
		}
		check := func(r int, st [4]uint32) {
			if st != iv.states[r] {
				t.Errorf("%d-bit key: R[%d] = %08X, want %08X", iv.keySize, r, st, iv.states[r])
			}
		}
		check(-1, w)
		for i := range w {
			w[i] ^= c.k[i]
		}
		check(0, w)
		g := func(x uint32) uint32 { return h(x, l[:k]) }
		for r := 0; r < 16; r++ {
			// The paper's file prints the state without the word swap.
			x, y, u, v := 0, 1, 2, 3
			if r%2 == 1 {
				x, y, u, v = 2, 3, 0, 1
			}
			t0 := g(w[x])
			t1 := g(bits.RotateLeft32(w[y], 8))
			if [2]uint32{t0, t1} != iv.t[r+1] {
				t.Errorf("%d-bit key round %d: t0,t1 = %08X,%08X want %08X", iv.keySize, r, t0, t1, iv.t[r+1])
			}
			w[u] = bits.RotateLeft32(w[u]^(t0+t1+c.k[8+2*r]), -1)
			w[v] = bits.RotateLeft32(w[v], 1) ^ (t0 + 2*t1 + c.k[9+2*r])
			check(r+1, w)
		}
		out := [4]uint32{w[2] ^ c.k[4], w[3] ^ c.k[5], w[0] ^ c.k[6], w[1] ^ c.k[7]}
		check(17, out)

		// And every kernel gives the published ciphertext.
		for _, kn := range availableKernels() {
			c, _ := newWithKernel(iv.key, kn)
			got := make([]byte, 16)
			c.EncryptBlocks(got, iv.pt)
			if !bytes.Equal(got, iv.ct) {
				t.Errorf("%v %d-bit key: CT = %X, want %X", kn, iv.keySize, got, iv.ct)
			}
			c.DecryptBlocks(got, got)
			if !bytes.Equal(got, iv.pt) {
				t.Errorf("%v %d-bit key: decrypt = %X, want %X", kn, iv.keySize, got, iv.pt)
			}
		}
	}
}

// tblEntry is one I= entry of testdata/ecb_tbl.txt.
type tblEntry struct {
	keySize, i  int
	key, pt, ct []byte
}

func parseTbl(t *testing.T) []tblEntry {
	f, err := os.ReadFile("testdata/ecb_tbl.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out []tblEntry
	keySize := 0
	sc := bufio.NewScanner(bytes.NewReader(f))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "KEYSIZE="):
			keySize, _ = strconv.Atoi(line[8:])
		case strings.HasPrefix(line, "I="):
			n, _ := strconv.Atoi(line[2:])
			out = append(out, tblEntry{keySize: keySize, i: n})
		case len(out) == 0:
		case strings.HasPrefix(line, "KEY="):
			out[len(out)-1].key = mustHex(t, line[4:])
		case strings.HasPrefix(line, "PT="):
			out[len(out)-1].pt = mustHex(t, line[3:])
		case strings.HasPrefix(line, "CT="):
			out[len(out)-1].ct = mustHex(t, line[3:])
		}
	}
	if len(out) != 36 {
		t.Fatalf("parsed %d table entries, want 36", len(out))
	}
	return out
}

// TestTablesKAT recomputes the chained tables test of the paper for every
// key size and kernel and compares each listed entry.
func TestTablesKAT(t *testing.T) {
	entries := parseTbl(t)
	for _, kn := range availableKernels() {
		for _, keySize := range []int{128, 192, 256} {
			want := map[int]tblEntry{}
			for _, e := range entries {
				if e.keySize == keySize {
					want[e.i] = e
				}
			}
			n := keySize / 8
			key := make([]byte, n)
			pt := make([]byte, 16)
			prevPT := make([]byte, 16)
			for i := 1; i <= 49; i++ {
				if i > 1 {
					// Key: the previous plaintext followed by the previous key.
					key = append(append([]byte{}, prevPT...), key...)[:n]
				}
				c, err := newWithKernel(key, kn)
				if err != nil {
					t.Fatal(err)
				}
				ct := make([]byte, 16)
				c.EncryptBlocks(ct, pt)
				if e, ok := want[i]; ok {
					if !bytes.Equal(key, e.key) || !bytes.Equal(pt, e.pt) || !bytes.Equal(ct, e.ct) {
						t.Fatalf("%v %d-bit I=%d: KEY=%X PT=%X CT=%X, want KEY=%X PT=%X CT=%X",
							kn, keySize, i, key, pt, ct, e.key, e.pt, e.ct)
					}
					delete(want, i)
				}
				back := make([]byte, 16)
				c.DecryptBlocks(back, ct)
				if !bytes.Equal(back, pt) {
					t.Fatalf("%v %d-bit I=%d: decryption does not invert", kn, keySize, i)
				}
				copy(prevPT, pt)
				pt = ct
			}
			if len(want) != 0 {
				t.Fatalf("%d-bit entries not reached: %v", keySize, want)
			}
		}
	}
}

// TestVectorsBulk runs every published vector through the multi-block
// paths: the plaintext repeated in runs of several lengths, so each lane and
// tail position of the interleaved kernels sees it (the AVX-512 kernel
// hands tails under 8 blocks to the portable code, so the longer runs are
// the ones that reach its assembly).
func TestVectorsBulk(t *testing.T) {
	entries := parseTbl(t)
	for _, iv := range parseIval(t) {
		entries = append(entries, tblEntry{keySize: iv.keySize, key: iv.key, pt: iv.pt, ct: iv.ct})
	}
	for _, kn := range availableKernels() {
		for _, e := range entries {
			c, err := newWithKernel(e.key, kn)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 47, 48, 49, 64, 100} {
				buf := bytes.Repeat(e.pt, n)
				c.EncryptBlocks(buf, buf)
				for j := 0; j < n; j++ {
					if !bytes.Equal(buf[16*j:16*j+16], e.ct) {
						t.Fatalf("%v %d-bit I=%d, %d blocks: block %d = %X, want %X", kn, e.keySize, e.i, n, j, buf[16*j:16*j+16], e.ct)
					}
				}
				c.DecryptBlocks(buf, buf)
				if !bytes.Equal(buf, bytes.Repeat(e.pt, n)) {
					t.Fatalf("%v %d-bit I=%d, %d blocks: decryption does not give the plaintext back", kn, e.keySize, e.i, n)
				}
			}
		}
	}
}
