// Package hashes is the registry of the hash functions volume formats name:
// VeraCrypt's PRFs (SHA-512, Whirlpool, SHA-256, BLAKE2s-256, Streebog,
// RIPEMD-160), TrueCrypt's legacy SHA-1, LUKS's hash names, and MD5 for
// OpenSSL's EVP_BytesToKey. Lookup accepts VeraCrypt's display names and the
// names cryptsetup and LUKS headers use, case-insensitively.
package hashes

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"strings"

	"golang.org/x/crypto/blake2s"

	"github.com/cryptvol/cryptvol/hashes/ripemd160"
	"github.com/cryptvol/cryptvol/hashes/streebog"
	"github.com/cryptvol/cryptvol/hashes/whirlpool"
)

// Spec describes one hash function.
type Spec struct {
	// Name is the canonical (VeraCrypt-style) name, e.g. "SHA-512".
	Name string
	// New returns a fresh instance.
	New func() hash.Hash
	// Size is the digest length in bytes.
	Size int
	// BlockSize is the input block length in bytes (the HMAC block size).
	BlockSize int
}

// ErrUnknown is returned (wrapped) by Lookup for a name it does not know.
var ErrUnknown = errors.New("unknown hash")

// Canonical names.
const (
	SHA512      = "SHA-512"
	SHA384      = "SHA-384"
	SHA256      = "SHA-256"
	SHA224      = "SHA-224"
	SHA1        = "SHA-1"
	Whirlpool   = "Whirlpool"
	RIPEMD160   = "RIPEMD-160"
	Streebog    = "Streebog"
	Streebog256 = "Streebog-256"
	BLAKE2s256  = "BLAKE2s-256"
	MD5         = "MD5"
)

// newBLAKE2s256 is unkeyed BLAKE2s-256, the hash VeraCrypt puts inside
// HMAC (with the HMAC block size 64).
func newBLAKE2s256() hash.Hash {
	h, err := blake2s.New256(nil)
	if err != nil {
		panic(err) // unreachable: a nil key is always valid
	}
	return h
}

var registry = []struct {
	spec    Spec
	aliases []string
}{
	{Spec{SHA512, sha512.New, sha512.Size, sha512.BlockSize}, []string{"sha512", "sha-2-512"}},
	{Spec{Whirlpool, func() hash.Hash { return whirlpool.New() }, whirlpool.Size, whirlpool.BlockSize}, []string{"whirlpool", "wp512"}},
	{Spec{SHA256, sha256.New, sha256.Size, sha256.BlockSize}, []string{"sha256", "sha-2-256"}},
	{Spec{BLAKE2s256, newBLAKE2s256, blake2s.Size, blake2s.BlockSize}, []string{"blake2s", "blake2s-256", "blake2s256"}},
	{Spec{Streebog, func() hash.Hash { return streebog.New() }, streebog.Size, streebog.BlockSize}, []string{"stribog512", "streebog512", "streebog-512", "stribog-512", "gost3411-2012-512"}},
	{Spec{RIPEMD160, func() hash.Hash { return ripemd160.New() }, ripemd160.Size, ripemd160.BlockSize}, []string{"ripemd160", "rmd160"}},
	{Spec{SHA1, sha1.New, sha1.Size, sha1.BlockSize}, []string{"sha1"}},
	{Spec{Streebog256, func() hash.Hash { return streebog.New256() }, streebog.Size256, streebog.BlockSize}, []string{"stribog256", "streebog256", "stribog-256", "gost3411-2012-256"}},
	{Spec{SHA384, sha512.New384, sha512.Size384, sha512.BlockSize}, []string{"sha384"}},
	{Spec{SHA224, sha256.New224, sha256.Size224, sha256.BlockSize}, []string{"sha224"}},
	{Spec{MD5, md5.New, md5.Size, md5.BlockSize}, []string{"md5"}},
}

var byName = func() map[string]int {
	m := map[string]int{}
	for i, r := range registry {
		for _, n := range append([]string{r.spec.Name}, r.aliases...) {
			k := strings.ToLower(n)
			if j, dup := m[k]; dup && j != i {
				panic("hashes: duplicate name " + n)
			}
			m[k] = i
		}
	}
	return m
}()

// Lookup returns the hash registered under name (a canonical name or an
// alias, in any case).
func Lookup(name string) (Spec, error) {
	i, ok := byName[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return Spec{}, fmt.Errorf("%w %q", ErrUnknown, name)
	}
	return registry[i].spec, nil
}

// MustLookup is Lookup for names known at compile time; it panics on an
// unknown name.
func MustLookup(name string) Spec {
	s, err := Lookup(name)
	if err != nil {
		panic(err)
	}
	return s
}

// All returns every registered hash, VeraCrypt's PRFs first in VeraCrypt's
// order.
func All() []Spec {
	out := make([]Spec, len(registry))
	for i, r := range registry {
		out[i] = r.spec
	}
	return out
}
