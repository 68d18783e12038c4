package sector

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/cryptvol/cryptvol/ciphers"
	"golang.org/x/crypto/twofish"
	xcxts "golang.org/x/crypto/xts"
)

// xtsPaths builds the same XTS mode twice: on the generic path (k1 is a
// plain ciphers.Block) and on the fused path (k1 is a ciphers.XTSBlock).
func xtsPaths(t *testing.T, k1, k2 stdBlock, iv IVGenerator, sectorSize int) map[string]Mode {
	t.Helper()
	generic, err := NewXTSWithIV(k1, k2, iv, sectorSize)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := withFused(k1)
	fused, err := NewXTSWithIV(f, k2, iv, sectorSize)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Mode{"generic": generic, "fused": fused}
}

// TestXTSVectors checks IEEE 1619-2007 Annex B vectors 1-14 on both paths,
// out of place and in place. The data unit of each vector is one sector.
// Vectors 15-18 encrypt partial blocks with ciphertext stealing, which no
// disk sector needs, so they are not in testdata.
func TestXTSVectors(t *testing.T) {
	vs := readVectors(t, "testdata/xts-aes-ieee1619-2007.txt")
	if len(vs) != 14 {
		t.Fatalf("want 14 vectors, have %d", len(vs))
	}
	for _, v := range vs {
		key, pt, ct := unhex(t, v["Key"]), unhex(t, v["PTX"]), unhex(t, v["CTX"])
		sector, err := strconv.ParseUint(v["Sector"], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		k1, k2 := newAES(t, key[:len(key)/2]), newAES(t, key[len(key)/2:])
		for name, m := range xtsPaths(t, k1, k2, IVPlain64, len(pt)) {
			got := make([]byte, len(pt))
			m.Encrypt(got, pt, sector)
			if !bytes.Equal(got, ct) {
				t.Errorf("vector %s %s: encrypt mismatch\n got %x\nwant %x", v["Vector"], name, got, ct)
			}
			m.Decrypt(got, got, sector)
			if !bytes.Equal(got, pt) {
				t.Errorf("vector %s %s: in-place decrypt mismatch", v["Vector"], name)
			}
		}
	}
}

// TestXTSMatchesXCrypto compares whole runs against golang.org/x/crypto/xts
// applied sector by sector, for random runs of 1..64 sectors starting
// anywhere in the 64-bit sector space (including above 2^32 and across the
// 2^64 wrap), with AES-128, AES-256 and Twofish-256, on both paths.
func TestXTSMatchesXCrypto(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type cipherCase struct {
		name   string
		keyLen int
		ours   func(testing.TB, []byte) stdBlock
		theirs func([]byte) (cipher.Block, error)
	}
	cases := []cipherCase{
		{"AES-128", 16, newAES, aes.NewCipher},
		{"AES-256", 32, newAES, aes.NewCipher},
		{"Twofish-256", 32, newTwofish, func(k []byte) (cipher.Block, error) { return twofish.NewCipher(k) }},
	}
	firsts := []uint64{0, 1, 1<<32 - 3, 1 << 40, math.MaxUint64 - 2}
	for _, cc := range cases {
		// 48 and 528 are not powers of two (the sector count is then
		// found by division, not a shift).
		for _, ss := range []int{512, 4096, 48, 528} {
			key := make([]byte, 2*cc.keyLen)
			fill(rng, key)
			ref, err := xcxts.NewCipher(cc.theirs, key)
			if err != nil {
				t.Fatal(err)
			}
			k1, k2 := cc.ours(t, key[:cc.keyLen]), cc.ours(t, key[cc.keyLen:])
			for name, m := range xtsPaths(t, k1, k2, IVPlain64, ss) {
				for i := 0; i < 12; i++ {
					n := 1 + rng.IntN(64)
					first := rng.Uint64()
					if i < len(firsts) {
						first = firsts[i]
					}
					pt := make([]byte, n*ss)
					fill(rng, pt)
					want := make([]byte, len(pt))
					for s := 0; s < n; s++ {
						ref.Encrypt(want[s*ss:(s+1)*ss], pt[s*ss:(s+1)*ss], first+uint64(s))
					}
					got := make([]byte, len(pt))
					m.Encrypt(got, pt, first)
					if !bytes.Equal(got, want) {
						t.Fatalf("%s %d %s: %d sectors from %d: encrypt differs from x/crypto/xts",
							cc.name, ss, name, n, first)
					}
					m.Decrypt(got, got, first)
					if !bytes.Equal(got, pt) {
						t.Fatalf("%s %d %s: decrypt does not invert", cc.name, ss, name)
					}
				}
			}
		}
	}
}

// TestXTSFusedGetsRuns checks that the fused kernel is called once per
// chunk, not per sector or block.
func TestXTSFusedGetsRuns(t *testing.T) {
	key := make([]byte, 64)
	f, calls := withFused(newAES(t, key[:32]))
	m, err := NewXTS(f, newAES(t, key[32:]), 512)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3*chunkBytes)
	m.Encrypt(buf, buf, 7)
	if got := calls.Load(); got != 3 {
		t.Fatalf("fused kernel called %d times for 3 chunks", got)
	}
}

// refXTSSector encrypts one sector by IEEE 1619 with tweak input iv.
func refXTSSector(k1, k2 cipher.Block, iv, pt []byte) []byte {
	var t [16]byte
	k2.Encrypt(t[:], iv)
	out := make([]byte, len(pt))
	for j := 0; j < len(pt); j += 16 {
		for k := 0; k < 16; k++ {
			out[j+k] = pt[j+k] ^ t[k]
		}
		k1.Encrypt(out[j:j+16], out[j:j+16])
		for k := 0; k < 16; k++ {
			out[j+k] ^= t[k]
		}
		refMulAlpha(&t)
	}
	return out
}

// TestXTSWithIVs checks xts-plain (32-bit wrap) and xts-essiv:sha256, whose
// tweak input is AES-256_{SHA-256(k1||k2)}(plain64), against a reference
// built here from crypto/aes and crypto/sha256.
func TestXTSWithIVs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	key := make([]byte, 64)
	fill(rng, key)
	salt := sha256.Sum256(key)
	essivRef, _ := aes.NewCipher(salt[:])
	ivFor := map[string]func(uint64) []byte{
		"plain": func(s uint64) []byte {
			iv := make([]byte, 16)
			binary.LittleEndian.PutUint32(iv, uint32(s))
			return iv
		},
		"essiv:sha256": func(s uint64) []byte {
			iv := make([]byte, 16)
			binary.LittleEndian.PutUint64(iv, s)
			essivRef.Encrypt(iv, iv)
			return iv
		},
	}
	essiv, err := ESSIV(newAESBlock, sha256.New(), key)
	if err != nil {
		t.Fatal(err)
	}
	gens := map[string]IVGenerator{"plain": IVPlain, "essiv:sha256": essiv}
	r1, _ := aes.NewCipher(key[:32])
	r2, _ := aes.NewCipher(key[32:])
	for ivName, gen := range gens {
		for name, m := range xtsPaths(t, newAES(t, key[:32]), newAES(t, key[32:]), gen, 512) {
			for _, first := range []uint64{0, 1<<32 - 2, 1<<33 + 5, rng.Uint64()} {
				n := 1 + rng.IntN(200)
				pt := make([]byte, n*512)
				fill(rng, pt)
				got := make([]byte, len(pt))
				m.Encrypt(got, pt, first)
				for s := 0; s < n; s++ {
					want := refXTSSector(r1, r2, ivFor[ivName](first+uint64(s)), pt[s*512:(s+1)*512])
					if !bytes.Equal(got[s*512:(s+1)*512], want) {
						t.Fatalf("xts-%s %s: sector %d of run from %d differs", ivName, name, s, first)
					}
				}
				m.Decrypt(got, got, first)
				if !bytes.Equal(got, pt) {
					t.Fatalf("xts-%s %s: decrypt does not invert", ivName, name)
				}
			}
		}
	}
}

func TestXTSRejects(t *testing.T) {
	aesB := newAES(t, make([]byte, 16))
	des := stdBlock{mustDES3(t)}
	for _, ss := range []int{0, 8, 24, 4112, -16} {
		if _, err := NewXTS(aesB, aesB, ss); err == nil {
			t.Errorf("sector size %d accepted", ss)
		}
	}
	if _, err := NewXTS(des, aesB, 512); err == nil {
		t.Error("8-byte block cipher accepted as k1")
	}
	if _, err := NewXTS(nil, aesB, 512); err == nil {
		t.Error("nil cipher accepted")
	}
	if _, err := NewXTSWithIV(aesB, aesB, nil, 512); err == nil {
		t.Error("nil IV generator accepted")
	}
	m, _ := NewXTS(aesB, aesB, 512)
	mustPanic(t, "partial sector", func() { m.Encrypt(make([]byte, 600), make([]byte, 600), 0) })
	mustPanic(t, "short dst", func() { m.Encrypt(make([]byte, 512), make([]byte, 1024), 0) })
	var _ ciphers.XTSBlock = fusedXTS{}
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

func fill(rng *rand.Rand, b []byte) {
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	for i := len(b) &^ 7; i < len(b); i++ {
		b[i] = byte(rng.Uint32())
	}
}

// TestXTSPlain64Path: with the real AES (which derives plain64 tweaks in
// its own kernel call) XTS still matches x/crypto/xts, and with another
// IV generator the mode does not take that path.
func TestXTSPlain64Path(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	key := make([]byte, 64)
	fill(rng, key)
	k1, err := ciphers.New("AES", key[:32])
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := ciphers.New("AES", key[32:])
	m, err := NewXTS(k1, k2, 512)
	if err != nil {
		t.Fatal(err)
	}
	if m.(*xts).p64 == nil {
		t.Fatal("AES XTS with plain64 does not use the cipher's plain64 kernel")
	}
	if m2, _ := NewXTSWithIV(k1, k2, IVPlain, 512); m2.(*xts).p64 != nil {
		t.Fatal("xts-plain took the plain64 path")
	}
	ref, _ := xcxts.NewCipher(aes.NewCipher, key)
	for _, n := range []int{1, 8, 40} {
		first := rng.Uint64()
		pt := make([]byte, n*512)
		fill(rng, pt)
		want := make([]byte, len(pt))
		for s := 0; s < n; s++ {
			ref.Encrypt(want[s*512:(s+1)*512], pt[s*512:(s+1)*512], first+uint64(s))
		}
		got := make([]byte, len(pt))
		m.Encrypt(got, pt, first)
		if !bytes.Equal(got, want) {
			t.Fatalf("%d sectors: encrypt differs from x/crypto/xts", n)
		}
		m.Decrypt(got, got, first)
		if !bytes.Equal(got, pt) {
			t.Fatalf("%d sectors: decrypt does not invert", n)
		}
	}
}
