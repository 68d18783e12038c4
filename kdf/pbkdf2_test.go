package kdf

import (
	"bufio"
	"bytes"
	"context"
	stdpbkdf2 "crypto/pbkdf2"
	"encoding/hex"
	"errors"
	"hash"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	xpbkdf2 "golang.org/x/crypto/pbkdf2"

	"github.com/cryptvol/cryptvol/hashes"
)

type pbkdf2Vector struct {
	line           int
	prf            string
	password, salt []byte
	iterations     int
	key            []byte
}

func field(t *testing.T, s string) []byte {
	t.Helper()
	if h, ok := strings.CutPrefix(s, "hex:"); ok {
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return []byte(s)
}

func readPBKDF2Vectors(t *testing.T) []pbkdf2Vector {
	t.Helper()
	f, err := os.Open("testdata/pbkdf2.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pbkdf2Vector
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Split(line, "|")
		if len(fs) != 5 {
			t.Fatalf("pbkdf2.txt:%d: want 5 fields", n)
		}
		it, err := strconv.Atoi(fs[3])
		if err != nil {
			t.Fatal(err)
		}
		key, err := hex.DecodeString(fs[4])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pbkdf2Vector{n, fs[0], field(t, fs[1]), field(t, fs[2]), it, key})
	}
	return out
}

// TestPBKDF2Vectors checks the published vectors (RFC 6070, RFC 7914,
// the SHA-512 set, VeraCrypt's Tests.c) on both the sequential and the
// parallel block paths.
func TestPBKDF2Vectors(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range readPBKDF2Vectors(t) {
		if v.iterations > 1<<20 && testing.Short() {
			continue
		}
		seen[v.prf] = true
		workers := []int{1, 4}
		if v.iterations > 1<<20 {
			workers = workers[:1] // seconds of work: once is enough
		}
		for _, par := range workers {
			withParallel(t, par)
			got, err := PBKDF2ByName(v.prf, v.password, v.salt, v.iterations, len(v.key))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, v.key) {
				t.Errorf("line %d %s (workers %d): got %x, want %x", v.line, v.prf, par, got, v.key)
			}
		}
	}
	for _, prf := range []string{"SHA-1", "SHA-256", "SHA-512", "Whirlpool", "RIPEMD-160", "Streebog", "BLAKE2s-256"} {
		if !seen[prf] {
			t.Errorf("no vector for %s", prf)
		}
	}
}

// withParallel sets the goroutine limit for the rest of the test.
func withParallel(t *testing.T, n int) {
	saved := maxParallel
	maxParallel = func() int { return n }
	t.Cleanup(func() { maxParallel = saved })
}

// TestPBKDF2AgainstXCrypto compares every registered PRF with
// golang.org/x/crypto/pbkdf2 and crypto/pbkdf2 (independent PBKDF2 and
// HMAC code over the same hash) on random passwords, salts, key lengths
// and iteration counts, including passwords longer than the hash block.
func TestPBKDF2AgainstXCrypto(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rnd := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for _, spec := range hashes.All() {
		for trial := 0; trial < 12; trial++ {
			pw := rnd(rng.IntN(3 * spec.BlockSize))
			salt := rnd(rng.IntN(80))
			iter := 1 + rng.IntN(40)
			if trial == 0 {
				iter = parallelThreshold + 3 // exercise the parallel path
			}
			keyLen := 1 + rng.IntN(200)
			want := xpbkdf2.Key(pw, salt, iter, keyLen, spec.New)
			got := PBKDF2(spec, pw, salt, iter, keyLen)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s pw %d salt %d iter %d len %d:\n got %x\nwant %x", spec.Name, len(pw), len(salt), iter, keyLen, got, want)
			}
			std, err := stdpbkdf2.Key(spec.New, string(pw), salt, iter, keyLen)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, std) {
				t.Fatalf("%s: differs from crypto/pbkdf2", spec.Name)
			}
		}
	}
}

// TestGenericFallback runs the crypto/hmac path (used for hashes that can
// neither be copied nor marshalled) against x/crypto.
func TestGenericFallback(t *testing.T) {
	newHash := func() hash.Hash { return opaque{hashes.MustLookup("SHA-256").New()} }
	spec := hashes.Spec{Name: "opaque", New: newHash, Size: 32, BlockSize: 64}
	if _, ok := newPRF(spec, nil).(*hmacPRF); !ok {
		t.Fatal("opaque hash did not take the generic path")
	}
	got := PBKDF2(spec, []byte("pw"), []byte("salt"), 300, 70)
	if want := xpbkdf2.Key([]byte("pw"), []byte("salt"), 300, 70, newHash); !bytes.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, want)
	}
}

// opaque hides the marshalling methods of the hash it wraps.
type opaque struct{ h hash.Hash }

func (o opaque) Write(p []byte) (int, error) { return o.h.Write(p) }
func (o opaque) Sum(b []byte) []byte         { return o.h.Sum(b) }
func (o opaque) Reset()                      { o.h.Reset() }
func (o opaque) Size() int                   { return o.h.Size() }
func (o opaque) BlockSize() int              { return o.h.BlockSize() }

// TestPBKDF2ZeroAllocsPerIteration: one iteration and a thousand allocate
// exactly the same, for every PRF, so the iteration loop allocates nothing.
func TestPBKDF2ZeroAllocsPerIteration(t *testing.T) {
	withParallel(t, 1)
	for _, spec := range hashes.All() {
		pw, salt := []byte("password"), []byte("salt and pepper")
		one := testing.AllocsPerRun(5, func() { PBKDF2(spec, pw, salt, 1, 64) })
		many := testing.AllocsPerRun(5, func() { PBKDF2(spec, pw, salt, 1000, 64) })
		if one != many {
			t.Errorf("%s: %v allocations with 1 iteration, %v with 1000", spec.Name, one, many)
		}
	}
}

func TestPBKDF2Cancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	_, err := PBKDF2Context(ctx, hashes.MustLookup("Whirlpool"), []byte("pw"), []byte("salt"), 1<<30, 192)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestPBKDF2BadArguments(t *testing.T) {
	spec := hashes.MustLookup("SHA-256")
	if _, err := PBKDF2Context(context.Background(), spec, nil, nil, 0, 32); err == nil {
		t.Error("0 iterations accepted")
	}
	if _, err := PBKDF2Context(context.Background(), spec, nil, nil, 1, 0); err == nil {
		t.Error("0-byte key accepted")
	}
	if _, err := PBKDF2ByName("no-such-hash", nil, nil, 1, 1); !errors.Is(err, hashes.ErrUnknown) {
		t.Errorf("unknown PRF: %v", err)
	}
}

// TestBLAKE2sFastPathInUse makes sure the BLAKE2s PRF still gets the
// precompressed key blocks with this x/crypto version (if x/crypto's
// marshalled layout changed, results stay right but speed halves).
func TestBLAKE2sFastPathInUse(t *testing.T) {
	spec := hashes.MustLookup("BLAKE2s-256")
	p, ok := newPRF(spec, []byte("pw")).(*marshalPRF)
	if !ok {
		t.Fatalf("BLAKE2s PRF is %T", newPRF(spec, []byte("pw")))
	}
	plain := newMarshalPRF(spec.New, []byte("pw"))
	if bytes.Equal(p.inner, plain.inner) {
		t.Fatal("BLAKE2s PRF fell back to the uncompressed key-block snapshot")
	}
}
