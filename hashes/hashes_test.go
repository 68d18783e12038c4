package hashes

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/hashes/internal/hashtest"
)

// TestLookupNames checks every name and alias the volume formats use
// resolves, case-insensitively, to the right function: each is run on the
// published vector of testdata/registry.txt for its canonical name.
func TestLookupNames(t *testing.T) {
	vectors := readRegistryVectors(t)
	names := map[string]string{
		"SHA-512": SHA512, "sha512": SHA512, "SHA512": SHA512,
		"SHA-256": SHA256, "sha256": SHA256,
		"SHA-1": SHA1, "sha1": SHA1,
		"Whirlpool": Whirlpool, "whirlpool": Whirlpool, "wp512": Whirlpool, "WP512": Whirlpool,
		"RIPEMD-160": RIPEMD160, "ripemd160": RIPEMD160,
		"Streebog": Streebog, "stribog512": Streebog, "streebog512": Streebog,
		"BLAKE2s-256": BLAKE2s256, "blake2s": BLAKE2s256, "blake2s-256": BLAKE2s256,
		"Streebog-256": Streebog256, "stribog256": Streebog256,
		"MD5": MD5, "md5": MD5, "SHA-384": SHA384, "sha384": SHA384, "SHA-224": SHA224, "sha224": SHA224,
	}
	for name, canon := range names {
		s, err := Lookup(name)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", name, err)
		}
		if s.Name != canon {
			t.Errorf("Lookup(%q).Name = %q, want %q", name, s.Name, canon)
		}
		v, ok := vectors[canon]
		if !ok {
			t.Fatalf("no vector for %s", canon)
		}
		h := s.New()
		h.Write(v.message)
		got := h.Sum(nil)
		if !bytes.Equal(got, v.digest) {
			t.Errorf("%s: got %x, want %x", name, got, v.digest)
		}
		if s.Size != len(got) || s.Size != h.Size() || s.BlockSize != h.BlockSize() {
			t.Errorf("%s: Spec sizes %d/%d, hash says %d/%d", name, s.Size, s.BlockSize, h.Size(), h.BlockSize())
		}
	}
	for _, s := range All() {
		if _, ok := vectors[s.Name]; !ok {
			t.Errorf("registered hash %s has no vector", s.Name)
		}
	}
}

type registryVector struct{ message, digest []byte }

func readRegistryVectors(t *testing.T) map[string]registryVector {
	t.Helper()
	data, err := os.ReadFile("testdata/registry.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]registryVector{}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Fatalf("registry.txt: bad line %q", line)
		}
		d, err := hex.DecodeString(f[2])
		if err != nil {
			t.Fatal(err)
		}
		out[f[0]] = registryVector{[]byte(f[1]), d}
	}
	return out
}

func TestLookupUnknown(t *testing.T) {
	if _, err := Lookup("sha3-512"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("unknown name: err = %v", err)
	}
}

func TestAllOrder(t *testing.T) {
	want := []string{SHA512, Whirlpool, SHA256, BLAKE2s256, Streebog, RIPEMD160}
	all := All()
	for i, n := range want {
		if all[i].Name != n {
			t.Fatalf("All()[%d] = %s, want %s", i, all[i].Name, n)
		}
	}
	if all[0].New().Size() != sha512.Size {
		t.Fatal("first entry is not SHA-512")
	}
}

// BenchmarkHashes measures the throughput of every registered hash on
// 8 KiB messages (the standard library ones for comparison).
func BenchmarkHashes(b *testing.B) {
	for _, s := range All() {
		b.Run(s.Name, func(b *testing.B) { hashtest.BenchHash(b, s.New(), 8192) })
	}
}
