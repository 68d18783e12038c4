package archive

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"strings"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
)

// Cipher is the AEAD that encrypts an archive's records, index segments and
// wrapped file key. Its value is the cipher byte of the header (SPEC.md).
type Cipher uint8

// The two AEADs of format version 1.
const (
	AES256GCM         Cipher = 1 // AES-256-GCM, the default; fastest with AES instructions
	XChaCha20Poly1305 Cipher = 2 // XChaCha20-Poly1305, for CPUs without AES instructions
)

// String returns the cipher's name as the CLI spells it.
func (c Cipher) String() string {
	switch c {
	case AES256GCM:
		return "aes-256-gcm"
	case XChaCha20Poly1305:
		return "xchacha20-poly1305"
	}
	return fmt.Sprintf("cipher(%d)", uint8(c))
}

// ParseCipher accepts "aes-256-gcm" (or "aes") and "xchacha20-poly1305"
// (or "xchacha20", "chacha"), in any case.
func ParseCipher(s string) (Cipher, error) {
	switch strings.ToLower(s) {
	case "aes-256-gcm", "aes256gcm", "aes-gcm", "aes":
		return AES256GCM, nil
	case "xchacha20-poly1305", "xchacha20poly1305", "xchacha20", "xchacha", "chacha":
		return XChaCha20Poly1305, nil
	}
	return 0, fmt.Errorf("unknown cipher %q (want aes-256-gcm or xchacha20-poly1305)", s)
}

func (c Cipher) valid() bool { return c == AES256GCM || c == XChaCha20Poly1305 }

// streamInfo is the HKDF info prefix of AES-256-GCM's per-stream keys.
const streamInfo = "cryptvol-archive stream key "

// newStreamAEAD returns the AEAD of one stream (a record or an index
// segment) with stream nonce r under the purpose key k (whose HMAC states
// are in ex).
//
// AES-256-GCM keys each stream with HKDF-Expand(k, streamInfo||r) so that
// its 96-bit nonces only need to be unique within a stream. XChaCha20-
// Poly1305 with nonce r||counter||last is, by its definition, ChaCha20-
// Poly1305 keyed with HChaCha20(k, r) and nonce 0^4||counter||last; doing the
// HChaCha20 step once per stream here keeps the per-chunk path free of the
// allocations chacha20poly1305.NewX makes on every call. The spec test checks
// both against chacha20poly1305.NewX and crypto/hkdf directly.
func newStreamAEAD(c Cipher, k *[32]byte, ex *expander, r *[16]byte) (cipher.AEAD, error) {
	switch c {
	case AES256GCM:
		var sub [32]byte
		ex.expand(&sub, streamInfo, r[:])
		defer clear(sub[:])
		b, err := aes.NewCipher(sub[:])
		if err != nil {
			return nil, err
		}
		return cipher.NewGCM(b)
	case XChaCha20Poly1305:
		sub, err := chacha20.HChaCha20(k[:], r[:])
		if err != nil {
			return nil, err
		}
		defer clear(sub)
		return chacha20poly1305.New(sub)
	}
	return nil, fmt.Errorf("%w: cipher %d", ErrUnsupported, uint8(c))
}

// wrapAEAD returns the AEAD that wraps the file key under a key-encryption
// key (used once per KEK, with an all-zero nonce; SPEC.md "Header").
func wrapAEAD(c Cipher, kek []byte) (cipher.AEAD, []byte, error) {
	switch c {
	case AES256GCM:
		b, err := aes.NewCipher(kek)
		if err != nil {
			return nil, nil, err
		}
		a, err := cipher.NewGCM(b)
		return a, make([]byte, 12), err
	case XChaCha20Poly1305:
		a, err := chacha20poly1305.NewX(kek)
		return a, make([]byte, 24), err
	}
	return nil, nil, fmt.Errorf("%w: cipher %d", ErrUnsupported, uint8(c))
}
