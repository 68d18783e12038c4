package opensslenc

import (
	"context"
	"crypto/sha3"
	"crypto/sha512"
	"fmt"
	"hash"
	"sort"
	"strings"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/kdf"
)

// DefaultDigest is -md's default since OpenSSL 1.1.0 (MD5 before).
const DefaultDigest = "sha256"

// DefaultIterations is the PBKDF2 iteration count of -pbkdf2 without -iter.
const DefaultIterations = 10000

// digests maps OpenSSL's -md names to hashes.
var digests = map[string]hashes.Spec{
	"md5":        hashes.MustLookup(hashes.MD5),
	"sha1":       hashes.MustLookup(hashes.SHA1),
	"sha224":     hashes.MustLookup(hashes.SHA224),
	"sha256":     hashes.MustLookup(hashes.SHA256),
	"sha384":     hashes.MustLookup(hashes.SHA384),
	"sha512":     hashes.MustLookup(hashes.SHA512),
	"ripemd160":  hashes.MustLookup(hashes.RIPEMD160),
	"sha512-224": {Name: "SHA-512/224", New: sha512.New512_224, Size: sha512.Size224, BlockSize: sha512.BlockSize},
	"sha512-256": {Name: "SHA-512/256", New: sha512.New512_256, Size: sha512.Size256, BlockSize: sha512.BlockSize},
	"sha3-224":   {Name: "SHA3-224", New: func() hash.Hash { return sha3.New224() }, Size: 28, BlockSize: 144},
	"sha3-256":   {Name: "SHA3-256", New: func() hash.Hash { return sha3.New256() }, Size: 32, BlockSize: 136},
	"sha3-384":   {Name: "SHA3-384", New: func() hash.Hash { return sha3.New384() }, Size: 48, BlockSize: 104},
	"sha3-512":   {Name: "SHA3-512", New: func() hash.Hash { return sha3.New512() }, Size: 64, BlockSize: 72},
}

// digestAliases are other spellings OpenSSL accepts.
var digestAliases = map[string]string{
	"sha-1": "sha1", "sha-224": "sha224", "sha-256": "sha256", "sha-384": "sha384", "sha-512": "sha512",
	"sha2-224": "sha224", "sha2-256": "sha256", "sha2-384": "sha384", "sha2-512": "sha512",
	"sha512/224": "sha512-224", "sha512/256": "sha512-256", "sha2-512/224": "sha512-224", "sha2-512/256": "sha512-256",
	"rmd160": "ripemd160", "ripemd": "ripemd160", "ripemd-160": "ripemd160",
}

// LookupDigest finds a -md digest by OpenSSL's name ("" is the default).
func LookupDigest(name string) (hashes.Spec, error) {
	n := strings.ToLower(name)
	if n == "" {
		n = DefaultDigest
	}
	if a, ok := digestAliases[n]; ok {
		n = a
	}
	h, ok := digests[n]
	if !ok {
		return hashes.Spec{}, fmt.Errorf("%w %q", ErrUnknownDigest, name)
	}
	return h, nil
}

// DigestNames lists the -md names, sorted.
func DigestNames() []string {
	out := make([]string, 0, len(digests))
	for n := range digests {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// BytesToKey is OpenSSL's EVP_BytesToKey with an iteration count of 1, the
// derivation `openssl enc` uses without -pbkdf2: D_1 = H(password ||
// salt), D_i = H(D_{i-1} || password || salt), and key || iv are the first
// keyLen + ivLen bytes of D_1 || D_2 || .... salt is 8 bytes or nil.
func BytesToKey(h hashes.Spec, password, salt []byte, keyLen, ivLen int) (key, iv []byte) {
	out := make([]byte, 0, keyLen+ivLen+h.Size)
	d := h.New()
	var prev []byte
	for len(out) < keyLen+ivLen {
		d.Reset()
		d.Write(prev)
		d.Write(password)
		d.Write(salt)
		n := len(out)
		out = d.Sum(out)
		prev = out[n:]
	}
	key = append([]byte(nil), out[:keyLen]...)
	iv = append([]byte(nil), out[keyLen:keyLen+ivLen]...)
	clear(out)
	return key, iv
}

// deriveKey turns the password into key and IV the way the parameters say.
func deriveKey(ctx context.Context, p *Params, c *Cipher, salt []byte) (key, iv []byte, err error) {
	h, err := LookupDigest(p.Digest)
	if err != nil {
		return nil, nil, err
	}
	if !p.PBKDF2 {
		key, iv = BytesToKey(h, p.Password, salt, c.KeySize, c.IVSize)
		return key, iv, nil
	}
	iter := p.Iterations
	if iter == 0 {
		iter = DefaultIterations
	}
	dk, err := kdf.PBKDF2Context(ctx, h, p.Password, salt, iter, c.KeySize+c.IVSize)
	if err != nil {
		return nil, nil, err
	}
	key = append([]byte(nil), dk[:c.KeySize]...)
	iv = append([]byte(nil), dk[c.KeySize:c.KeySize+c.IVSize]...)
	clear(dk)
	return key, iv, nil
}
