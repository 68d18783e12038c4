package aes

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
)

// forEachImpl runs f once per code path this CPU supports (the generic path
// always among them), so every path sees the same vectors.
func forEachImpl(t *testing.T, f func(t *testing.T, impl implementation)) {
	for _, impl := range supportedImpls() {
		t.Run(impl.String(), func(t *testing.T) { f(t, impl) })
	}
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

type ecbVector struct{ key, pt, ct []byte }

// readECBVectors parses "key plaintext ciphertext" lines.
func readECBVectors(t *testing.T, name string) []ecbVector {
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out []ecbVector
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("%s: bad line %q", name, line)
		}
		out = append(out, ecbVector{mustHex(t, f[0]), mustHex(t, f[1]), mustHex(t, f[2])})
	}
	return out
}

func TestKnownAnswers(t *testing.T) {
	var vecs []ecbVector
	vecs = append(vecs, readECBVectors(t, "fips197.txt")...)
	vecs = append(vecs, readECBVectors(t, "aesavs-ecb.txt")...)
	if len(vecs) < 25 {
		t.Fatalf("only %d vectors parsed", len(vecs))
	}
	forEachImpl(t, func(t *testing.T, impl implementation) {
		for i, v := range vecs {
			c, err := newWithImpl(v.key, impl)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 16)
			c.EncryptBlocks(got, v.pt)
			if !bytes.Equal(got, v.ct) {
				t.Errorf("vector %d: encrypt = %x, want %x", i, got, v.ct)
			}
			c.DecryptBlocks(got, v.ct)
			if !bytes.Equal(got, v.pt) {
				t.Errorf("vector %d: decrypt = %x, want %x", i, got, v.pt)
			}
			// The same block in every slot of a long run, so every lane
			// of the wide kernels and every tail length sees a known answer.
			for _, n := range []int{3, 37} {
				src := bytes.Repeat(v.pt, n)
				dst := make([]byte, len(src))
				c.EncryptBlocks(dst, src)
				if !bytes.Equal(dst, bytes.Repeat(v.ct, n)) {
					t.Errorf("vector %d: %d-block encrypt wrong", i, n)
				}
				c.DecryptBlocks(dst, dst)
				if !bytes.Equal(dst, src) {
					t.Errorf("vector %d: %d-block decrypt wrong", i, n)
				}
			}
		}
	})
}

type xtsVector struct {
	n          int
	key1, key2 []byte
	dusn       uint64
	ptx, ctx   []byte
}

// readXTSVectors parses testdata/ieee1619-xts.txt (format described there).
func readXTSVectors(t *testing.T) []xtsVector {
	f, err := os.Open("testdata/ieee1619-xts.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []map[string]string
	var last string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || trimmed[0] == '#':
		case line[0] == ' ':
			recs[len(recs)-1][last] += trimmed
		default:
			k, v, ok := strings.Cut(trimmed, " = ")
			if !ok {
				t.Fatalf("bad line %q", line)
			}
			if k == "vector" {
				recs = append(recs, map[string]string{})
			}
			recs[len(recs)-1][k] = v
			last = k
		}
	}
	seq := make([]byte, 512)
	for i := range seq {
		seq[i] = byte(i)
	}
	byNumber := map[int]xtsVector{}
	var out []xtsVector
	data := func(s string) []byte {
		switch {
		case s == "@seq512":
			return seq
		case strings.HasPrefix(s, "@ctx"):
			n, _ := strconv.Atoi(s[4:])
			v, ok := byNumber[n]
			if !ok {
				t.Fatalf("reference to unknown vector %s", s)
			}
			return v.ctx
		}
		return mustHex(t, s)
	}
	for _, r := range recs {
		n, _ := strconv.Atoi(r["vector"])
		var le [8]byte
		copy(le[:], mustHex(t, r["dusn"]))
		dusn := binary.LittleEndian.Uint64(le[:])
		v := xtsVector{n, mustHex(t, r["key1"]), mustHex(t, r["key2"]), dusn, data(r["ptx"]), data(r["ctx"])}
		if len(v.ptx) != len(v.ctx) {
			t.Fatalf("vector %d: lengths differ", n)
		}
		byNumber[n] = v
		out = append(out, v)
	}
	return out
}

// initialTweak computes T0 = E_K2(dusn as 16 little-endian bytes) with a
// separately keyed cipher, as IEEE 1619 section 5.3.1 specifies.
func initialTweak(t *testing.T, key2 []byte, dusn uint64, impl implementation) []byte {
	k2, err := newWithImpl(key2, impl)
	if err != nil {
		t.Fatal(err)
	}
	tw := make([]byte, 16)
	binary.LittleEndian.PutUint64(tw, dusn)
	k2.EncryptBlocks(tw, tw)
	return tw
}

func TestIEEE1619(t *testing.T) {
	vecs := readXTSVectors(t)
	if len(vecs) != 19 {
		t.Fatalf("parsed %d vectors, want 19", len(vecs))
	}
	forEachImpl(t, func(t *testing.T, impl implementation) {
		for _, v := range vecs {
			c, err := newWithImpl(v.key1, impl)
			if err != nil {
				t.Fatal(err)
			}
			tw := initialTweak(t, v.key2, v.dusn, impl)
			got := make([]byte, len(v.ptx))
			if len(v.ptx)%16 != 0 {
				xtsStealEncrypt(c, got, v.ptx, tw)
				if !bytes.Equal(got, v.ctx) {
					t.Errorf("vector %d (stealing): got %x, want %x", v.n, got, v.ctx)
				}
				continue
			}
			c.EncryptXTS(got, v.ptx, tw, len(v.ptx))
			if !bytes.Equal(got, v.ctx) {
				t.Errorf("vector %d: encrypt got %x, want %x", v.n, got, v.ctx)
			}
			c.DecryptXTS(got, v.ctx, tw, len(v.ptx))
			if !bytes.Equal(got, v.ptx) {
				t.Errorf("vector %d: decrypt wrong", v.n)
			}
			// In place.
			buf := append([]byte(nil), v.ptx...)
			c.EncryptXTS(buf, buf, tw, len(buf))
			if !bytes.Equal(buf, v.ctx) {
				t.Errorf("vector %d: in-place encrypt wrong", v.n)
			}
			c.DecryptXTS(buf, buf, tw, len(buf))
			if !bytes.Equal(buf, v.ptx) {
				t.Errorf("vector %d: in-place decrypt wrong", v.n)
			}
		}

		// Vectors 4-6 and 7-9 are consecutive data units under one key:
		// run each triple as one three-sector call.
		for _, group := range [][3]int{{4, 5, 6}, {7, 8, 9}, {10, 11, 12}} {
			var src, want, tweaks []byte
			var key1 []byte
			for _, n := range group {
				v := vecs[n-1]
				key1 = v.key1
				src = append(src, v.ptx...)
				want = append(want, v.ctx...)
				tweaks = append(tweaks, initialTweak(t, v.key2, v.dusn, impl)...)
			}
			c, _ := newWithImpl(key1, impl)
			got := make([]byte, len(src))
			c.EncryptXTS(got, src, tweaks, 512)
			if !bytes.Equal(got, want) {
				t.Errorf("vectors %v as one call: encrypt wrong", group)
			}
			c.DecryptXTS(got, want, tweaks, 512)
			if !bytes.Equal(got, src) {
				t.Errorf("vectors %v as one call: decrypt wrong", group)
			}
		}
	})
}

// xtsStealEncrypt is IEEE 1619 section 5.3.2 ciphertext stealing for one
// data unit whose length is not a multiple of 16, built on the package's
// block methods. Only the tests need it: the volume formats this project
// reads use whole 512-byte or 4096-byte sectors.
func xtsStealEncrypt(c *Cipher, dst, src, t0 []byte) {
	full := len(src) / 16 * 16
	b := len(src) - full
	if full > 16 {
		c.EncryptXTS(dst[:full-16], src[:full-16], t0, full-16)
	}
	lo, hi := binary.LittleEndian.Uint64(t0), binary.LittleEndian.Uint64(t0[8:])
	for j := 0; j < full/16-1; j++ {
		lo, hi = mulAlpha(lo, hi)
	}
	var tA, tB [16]byte
	binary.LittleEndian.PutUint64(tA[:], lo)
	binary.LittleEndian.PutUint64(tA[8:], hi)
	lo, hi = mulAlpha(lo, hi)
	binary.LittleEndian.PutUint64(tB[:], lo)
	binary.LittleEndian.PutUint64(tB[8:], hi)
	xor := func(x, y []byte) {
		for i := range x {
			x[i] ^= y[i]
		}
	}
	var cc, pp [16]byte
	copy(cc[:], src[full-16:full])
	xor(cc[:], tA[:])
	c.EncryptBlocks(cc[:], cc[:])
	xor(cc[:], tA[:])
	copy(pp[:], src[full:])
	copy(pp[b:], cc[b:])
	copy(dst[full:], cc[:b])
	xor(pp[:], tB[:])
	c.EncryptBlocks(pp[:], pp[:])
	xor(pp[:], tB[:])
	copy(dst[full-16:], pp[:])
}
