package archive

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cryptvol/cryptvol/kdf/argon2"
)

// Header layout (SPEC.md "Header"): 160 bytes at offset 0, never rewritten.
const (
	headerSize    = 160
	magic         = "cryptvol-archive"
	formatVersion = 1

	sourcePassword = 1 // KEK = Argon2id(password, salt)
	sourceKeyFile  = 2 // KEK = HKDF-SHA-256(key file, salt)

	wrapADEnd   = 64  // the wrap authenticates bytes [0, 64)
	headerMACAt = 128 // the header MAC covers bytes [0, 128)
)

// Limits on what a header may ask of the reader, so a hostile file cannot
// make opening it take hours or all memory.
const (
	maxArgon2MemoryKiB = 4 << 20 // 4 GiB
	maxArgon2Passes    = 64
	maxArgon2Lanes     = 64
	minKeyFile         = 32
	maxKeyFile         = 1 << 20
)

// Argon2Params are the Argon2id costs stored in the header of a
// password-protected archive.
type Argon2Params struct {
	MemoryKiB uint32 // m
	Passes    uint32 // t
	Lanes     uint32 // p
}

// DefaultArgon2 is RFC 9106's second recommended setting: 64 MiB, 3 passes,
// 4 lanes (about a tenth of a second on a current laptop core pair).
var DefaultArgon2 = Argon2Params{MemoryKiB: 64 << 10, Passes: 3, Lanes: 4}

// check refuses costs outside what the format allows, as option errors
// (ErrInvalidOption); a header that holds them is unsupported instead.
func (p Argon2Params) check() error {
	switch {
	case p.Lanes < 1 || p.Lanes > maxArgon2Lanes:
		return invalidOptionf("argon2 lanes %d: want 1 to %d", p.Lanes, maxArgon2Lanes)
	case p.Passes < 1 || p.Passes > maxArgon2Passes:
		return invalidOptionf("argon2 passes %d: want 1 to %d", p.Passes, maxArgon2Passes)
	case p.MemoryKiB < 8*p.Lanes || p.MemoryKiB > maxArgon2MemoryKiB:
		return invalidOptionf("argon2 memory %d KiB: want %d KiB (8 per lane) to 4 GiB", p.MemoryKiB, 8*p.Lanes)
	}
	return nil
}

// Credentials unlock an archive: a password (stretched with Argon2id) or
// the contents of a key file (32 bytes to 1 MiB of secret data, used
// through HKDF without stretching). Exactly one is set.
type Credentials struct {
	Password []byte
	KeyFile  []byte
}

// Wipe zeroes the password or key file, once they are no longer needed.
func (c Credentials) Wipe() {
	clear(c.Password)
	clear(c.KeyFile)
}

func (c Credentials) source() (byte, error) {
	switch {
	case c.KeyFile != nil && c.Password != nil:
		return 0, errors.New("archive: give a password or a key file, not both")
	case c.KeyFile != nil:
		if len(c.KeyFile) < minKeyFile || len(c.KeyFile) > maxKeyFile {
			return 0, fmt.Errorf("archive: a key file must hold %d bytes to 1 MiB, not %d", minKeyFile, len(c.KeyFile))
		}
		return sourceKeyFile, nil
	case c.Password != nil:
		return sourcePassword, nil
	}
	return 0, errors.New("archive: no password or key file")
}

// header is the decoded fixed header.
type header struct {
	cipher  Cipher
	source  byte
	argon   Argon2Params
	salt    [32]byte
	wrapped [48]byte // file key sealed under the KEK
	fileID  [16]byte
}

// prefix encodes bytes [0, 64): what the key wrap authenticates.
func (h *header) prefix() []byte {
	b := make([]byte, wrapADEnd, headerSize)
	copy(b, magic)
	binary.BigEndian.PutUint16(b[16:], formatVersion)
	b[18] = byte(h.cipher)
	b[19] = h.source
	binary.BigEndian.PutUint32(b[20:], h.argon.MemoryKiB)
	binary.BigEndian.PutUint32(b[24:], h.argon.Passes)
	binary.BigEndian.PutUint32(b[28:], h.argon.Lanes)
	copy(b[32:], h.salt[:])
	return b
}

// marshal encodes the whole header, its MAC keyed with the header key.
func (h *header) marshal(k *keys) []byte {
	b := h.prefix()
	b = append(b, h.wrapped[:]...)
	b = append(b, h.fileID[:]...)
	m := hmac.New(sha256.New, k.header[:])
	m.Write(b)
	return m.Sum(b)
}

// parseHeader decodes a header without any key: magic, version and ranges.
func parseHeader(b []byte) (header, error) {
	var h header
	if len(b) < headerSize || string(b[:16]) != magic {
		return h, ErrNotArchive
	}
	if v := binary.BigEndian.Uint16(b[16:]); v != formatVersion {
		return h, fmt.Errorf("%w: format version %d (this build reads %d)", ErrUnsupported, v, formatVersion)
	}
	h.cipher = Cipher(b[18])
	if !h.cipher.valid() {
		return h, fmt.Errorf("%w: cipher %d", ErrUnsupported, b[18])
	}
	h.source = b[19]
	h.argon = Argon2Params{
		MemoryKiB: binary.BigEndian.Uint32(b[20:]),
		Passes:    binary.BigEndian.Uint32(b[24:]),
		Lanes:     binary.BigEndian.Uint32(b[28:]),
	}
	switch h.source {
	case sourcePassword:
		if err := h.argon.check(); err != nil {
			return h, fmt.Errorf("%w: %v", ErrUnsupported, err)
		}
	case sourceKeyFile:
		if h.argon != (Argon2Params{}) {
			return h, fmt.Errorf("%w: key-file header with Argon2 parameters", ErrDamaged)
		}
	default:
		return h, fmt.Errorf("%w: key source %d", ErrUnsupported, h.source)
	}
	copy(h.salt[:], b[32:64])
	copy(h.wrapped[:], b[64:112])
	copy(h.fileID[:], b[112:128])
	return h, nil
}

// kek derives the key-encryption key from the credentials.
func (h *header) kek(ctx context.Context, cred Credentials) ([]byte, error) {
	src, err := cred.source()
	if err != nil {
		return nil, err
	}
	if src != h.source {
		if h.source == sourceKeyFile {
			return nil, fmt.Errorf("%w: this archive opens with a key file, not a password", ErrWrongKey)
		}
		return nil, fmt.Errorf("%w: this archive opens with a password, not a key file", ErrWrongKey)
	}
	if src == sourceKeyFile {
		return hkdf.Key(sha256.New, cred.KeyFile, h.salt[:], "cryptvol-archive key file", 32)
	}
	return argon2.Key(ctx, argon2.Params{
		Mode: argon2.Argon2id, Passes: h.argon.Passes, MemoryKiB: h.argon.MemoryKiB, Parallelism: h.argon.Lanes,
	}, cred.Password, h.salt[:], 32)
}

// unlock derives the KEK, unwraps the file key and checks the header MAC.
func (h *header) unlock(ctx context.Context, cred Credentials, raw []byte) (*keys, error) {
	kek, err := h.kek(ctx, cred)
	if err != nil {
		return nil, err
	}
	defer clear(kek)
	a, nonce, err := wrapAEAD(h.cipher, kek)
	if err != nil {
		return nil, err
	}
	fk, err := a.Open(nil, nonce, h.wrapped[:], raw[:wrapADEnd])
	if err != nil {
		return nil, ErrWrongKey
	}
	defer clear(fk)
	k := deriveKeys(h.cipher, fk)
	m := hmac.New(sha256.New, k.header[:])
	m.Write(raw[:headerMACAt])
	if !hmac.Equal(m.Sum(nil), raw[headerMACAt:headerSize]) {
		k.wipe()
		return nil, fmt.Errorf("%w: header MAC does not match", ErrDamaged)
	}
	return k, nil
}

// wrap seals a new file key under the KEK of fresh credentials.
func (h *header) wrap(ctx context.Context, cred Credentials, fileKey []byte) error {
	kek, err := h.kek(ctx, cred)
	if err != nil {
		return err
	}
	defer clear(kek)
	a, nonce, err := wrapAEAD(h.cipher, kek)
	if err != nil {
		return err
	}
	copy(h.wrapped[:], a.Seal(nil, nonce, fileKey, h.prefix()))
	return nil
}

// purposeKey is a key that streams derive their keys from.
type purposeKey struct {
	key [32]byte
	ex  *expander
}

// keys are the purpose keys derived from the file key.
type keys struct {
	cipher         Cipher
	header, footer [32]byte
	record, index  purposeKey
}

func deriveKeys(c Cipher, fileKey []byte) *keys {
	k := &keys{cipher: c}
	for _, d := range []struct {
		dst     *[32]byte
		purpose string
	}{{&k.header, "header"}, {&k.record.key, "record"}, {&k.index.key, "index"}, {&k.footer, "footer"}} {
		sub, err := hkdf.Key(sha256.New, fileKey, nil, "cryptvol-archive "+d.purpose, 32)
		if err != nil {
			panic(err) // SHA-256 with a 32-byte output cannot fail
		}
		copy(d.dst[:], sub)
		clear(sub)
	}
	k.record.ex = newExpander(k.record.key[:])
	k.index.ex = newExpander(k.index.key[:])
	return k
}

// wipe clears the key material this package holds (the AEADs built from it
// keep their own schedules until collected).
func (k *keys) wipe() {
	clear(k.header[:])
	clear(k.footer[:])
	for _, p := range []*purposeKey{&k.record, &k.index} {
		clear(p.key[:])
		if p.ex != nil {
			p.ex.wipe()
		}
	}
}
