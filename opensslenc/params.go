package opensslenc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Magic starts every salted file; the 8-byte salt follows it.
const Magic = "Salted__"

// SaltSize is the length of OpenSSL's salt.
const SaltSize = 8

// Params are the options of one `openssl enc` run.
type Params struct {
	Cipher *Cipher
	// Password derives the key and IV; nil means no password (then Key,
	// and IV if the cipher has one, must be given). An empty password is
	// []byte{}, not nil.
	Password []byte
	// NoSalt derives without salt and writes/reads no header (-nosalt).
	NoSalt bool
	// Salt is a fixed 8-byte salt (-S): used for the derivation but, as in
	// OpenSSL, never written to nor read from the file.
	Salt []byte
	// Digest is the -md hash name; "" means DefaultDigest.
	Digest string
	// PBKDF2 derives with PBKDF2-HMAC-Digest instead of EVP_BytesToKey;
	// Iterations 0 means DefaultIterations.
	PBKDF2     bool
	Iterations int
	// Key and IV (-K, -iv) replace the derived ones; each must be exactly
	// the cipher's length (ParseHex pads and cuts as OpenSSL does).
	Key, IV []byte
	// NoPad turns PKCS#7 padding off (-nopad); the data must then be a
	// whole number of blocks.
	NoPad bool
	// Base64 encodes the output (encryption) or decodes the input
	// (decryption); SingleLine writes it without line breaks (-A).
	Base64, SingleLine bool
	// Rand is the salt's source; nil means crypto/rand.
	Rand io.Reader
}

// Operation is one prepared encryption or decryption: its keys are known
// (for -p to print) and Run streams the data.
type Operation struct {
	p       Params
	decrypt bool
	salt    []byte // the salt array as OpenSSL keeps it: zeros when unused
	header  bool   // a Salted__ header is written (encryption)
	key, iv []byte
	dst     io.Writer
	src     io.Reader
}

// NewEncryption prepares to encrypt src into dst: it makes a random salt
// when one is needed and derives the key. Nothing is read or written
// until Run.
func NewEncryption(ctx context.Context, p Params, dst io.Writer, src io.Reader) (*Operation, error) {
	o := &Operation{p: p, dst: dst, src: src}
	if err := o.check(); err != nil {
		return nil, err
	}
	if p.Password != nil && !p.NoSalt && p.Salt == nil {
		r := p.Rand
		if r == nil {
			r = rand.Reader
		}
		if _, err := io.ReadFull(r, o.salt); err != nil {
			return nil, fmt.Errorf("opensslenc: making a salt: %w", err)
		}
		o.header = true
	}
	return o, o.keys(ctx)
}

// NewDecryption prepares to decrypt src into dst. When the parameters
// call for a Salted__ header (a password, no -nosalt, no -S) it reads the
// header from src now, so Salt, Key and IV are known before Run.
func NewDecryption(ctx context.Context, p Params, dst io.Writer, src io.Reader) (*Operation, error) {
	o := &Operation{p: p, decrypt: true, dst: dst, src: src}
	if err := o.check(); err != nil {
		return nil, err
	}
	if p.Base64 {
		o.src = newBase64Reader(src)
	}
	if p.Password != nil && !p.NoSalt && p.Salt == nil {
		var hdr [len(Magic) + SaltSize]byte
		n, _, err := readFull(o.src, hdr[:])
		if err != nil {
			return nil, err
		}
		if n < len(Magic) || string(hdr[:len(Magic)]) != Magic {
			return nil, ErrBadMagic
		}
		if n < len(hdr) {
			return nil, fmt.Errorf("%w: the salt header is cut short", ErrTruncated)
		}
		copy(o.salt, hdr[len(Magic):])
	}
	return o, o.keys(ctx)
}

func (o *Operation) check() error {
	p := &o.p
	c := p.Cipher
	if c == nil {
		return errors.New("opensslenc: no cipher")
	}
	if p.Password == nil && p.Key == nil {
		return fmt.Errorf("%w: give a password or a key", ErrNoKey)
	}
	if p.Password == nil && p.IV == nil && c.IVSize > 0 {
		return fmt.Errorf("%w: %s needs an IV with a raw key (iv undefined)", ErrNoKey, c.Name)
	}
	if p.Key != nil && len(p.Key) != c.KeySize {
		return fmt.Errorf("opensslenc: %s takes a %d-byte key, got %d", c.Name, c.KeySize, len(p.Key))
	}
	if p.IV != nil && c.IVSize > 0 && len(p.IV) != c.IVSize {
		return fmt.Errorf("opensslenc: %s takes a %d-byte IV, got %d", c.Name, c.IVSize, len(p.IV))
	}
	if p.Salt != nil && len(p.Salt) != SaltSize {
		return fmt.Errorf("opensslenc: the salt is %d bytes, want %d", len(p.Salt), SaltSize)
	}
	if p.Iterations < 0 {
		return fmt.Errorf("opensslenc: iteration count %d < 0", p.Iterations)
	}
	if _, err := LookupDigest(p.Digest); err != nil {
		return err
	}
	if !p.NoSalt {
		o.salt = make([]byte, SaltSize)
		copy(o.salt, p.Salt)
	}
	return nil
}

// keys derives the key and IV from the password (when there is one) and
// applies -K and -iv over them, in OpenSSL's order.
func (o *Operation) keys(ctx context.Context) error {
	p, c := &o.p, o.p.Cipher
	o.key, o.iv = make([]byte, c.KeySize), make([]byte, c.IVSize)
	if p.Password != nil {
		k, iv, err := deriveKey(ctx, p, c, o.salt)
		if err != nil {
			return err
		}
		copy(o.key, k)
		copy(o.iv, iv)
		clear(k)
		clear(iv)
	}
	if p.IV != nil {
		copy(o.iv, p.IV)
	}
	if p.Key != nil {
		copy(o.key, p.Key)
	}
	return nil
}

// Salt returns the 8-byte salt (all zeros when only a raw key was
// given), or nil with NoSalt.
func (o *Operation) Salt() []byte { return o.salt }

// Key returns the key in use.
func (o *Operation) Key() []byte { return o.key }

// IV returns the IV in use (empty for ECB and RC4).
func (o *Operation) IV() []byte { return o.iv }

// WritesHeader reports whether encryption writes a Salted__ header.
func (o *Operation) WritesHeader() bool { return o.header }

// Close zeroes the key material (not the caller's Params). The Operation
// cannot run afterwards.
func (o *Operation) Close() {
	clear(o.key)
	clear(o.iv)
	o.key, o.iv = nil, nil
}

// KeysText is what `openssl enc -p` and -P print: "salt=", "key=" and
// "iv =" lines in upper-case hex, each only when the value has bytes.
// The salt line is left out when no salt is used (-nosalt, or a raw key
// without password, where OpenSSL prints whatever its salt buffer holds).
func (o *Operation) KeysText() string {
	var b strings.Builder
	line := func(label string, v []byte) {
		if len(v) > 0 {
			fmt.Fprintf(&b, "%s%X\n", label, v)
		}
	}
	if o.p.Password != nil {
		line("salt=", o.salt)
	}
	line("key=", o.key)
	line("iv =", o.iv)
	return b.String()
}
