package luks

import (
	"fmt"
	"hash"
	"strings"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/ciphers/adiantum"
	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/sector"
)

// CipherSpec is a dm-crypt cipher specification as cryptsetup writes it in
// LUKS headers: "aes-xts-plain64" is cipher "aes", chain mode "xts" and IV
// generator "plain64". The kernel's capi form "capi:xts(aes)-plain64" parses
// to the same thing. Adiantum is spelt with its two ciphers, comma
// included: "xchacha12,aes-adiantum-plain64" is cipher "xchacha12,aes",
// mode "adiantum", IV "plain64".
type CipherSpec struct {
	Cipher string // "aes", "serpent", ..., or "xchacha12,aes", "xchacha20,aes" for adiantum
	Chain  string // "xts", "cbc", "lrw", "ecb" or "adiantum"
	IV     string // "plain64", "plain", "essiv:sha256", "benbi", ... ("" for ecb)
}

// ParseCipherSpec parses "CIPHER-CHAIN[-IV]" or "capi:CHAIN(CIPHER)[-IV]".
// It checks the spelling, not that the cipher is built in (see
// CipherSpec.Check).
func ParseCipherSpec(s string) (CipherSpec, error) {
	orig := s
	s = strings.ToLower(strings.TrimSpace(s))
	var c CipherSpec
	if rest, ok := strings.CutPrefix(s, "capi:"); ok {
		// capi:CHAIN(CIPHER)-IV; nested templates such as
		// xts(ecb(aes-generic)) name kernel drivers, not a cipher.
		open := strings.IndexByte(rest, '(')
		closing := strings.IndexByte(rest, ')')
		if open <= 0 || closing < open {
			return c, fmt.Errorf("cipher %q: malformed capi specification", orig)
		}
		c.Chain = rest[:open]
		c.Cipher = rest[open+1 : closing]
		tail := rest[closing+1:]
		if strings.ContainsAny(c.Cipher, "()") {
			return c, fmt.Errorf("cipher %q: nested kernel crypto templates are not supported", orig)
		}
		if tail != "" {
			if tail[0] != '-' {
				return c, fmt.Errorf("cipher %q: malformed capi specification", orig)
			}
			c.IV = tail[1:]
		}
	} else {
		parts := strings.SplitN(s, "-", 3)
		if len(parts) < 2 {
			return c, fmt.Errorf("cipher %q: want CIPHER-MODE-IV, e.g. aes-xts-plain64", orig)
		}
		c.Cipher, c.Chain = parts[0], parts[1]
		if len(parts) == 3 {
			c.IV = parts[2]
		}
	}
	if c.Cipher == "" {
		return c, fmt.Errorf("cipher %q: no cipher name", orig)
	}
	switch c.Chain {
	case "xts", "cbc", "lrw", "adiantum":
		if c.IV == "" {
			return c, fmt.Errorf("cipher %q: mode %s needs an IV generator (e.g. %s-plain64)", orig, c.Chain, c.Chain)
		}
	case "ecb":
		if c.IV != "" && c.IV != "null" {
			return c, fmt.Errorf("cipher %q: ecb takes no IV", orig)
		}
		c.IV = ""
	default:
		return c, fmt.Errorf("cipher %q: unsupported chaining mode %q (want xts, cbc, lrw, ecb or adiantum)", orig, c.Chain)
	}
	if c.Chain == "adiantum" {
		if _, err := adiantumRounds(c.Cipher); err != nil {
			return c, fmt.Errorf("cipher %q: %v", orig, err)
		}
		if _, err := adiantumIV(c.IV); err != nil {
			return c, fmt.Errorf("cipher %q: %v", orig, err)
		}
		return c, nil
	}
	if c.IV != "" {
		if h, ok := strings.CutPrefix(c.IV, "essiv:"); ok {
			if _, err := essivHash(h); err != nil {
				return c, fmt.Errorf("cipher %q: %v", orig, err)
			}
		} else if _, err := sector.LookupIV(c.IV); err != nil {
			return c, fmt.Errorf("cipher %q: unsupported IV generator %q", orig, c.IV)
		}
	}
	return c, nil
}

// String is cryptsetup's spelling, e.g. "aes-xts-plain64".
func (c CipherSpec) String() string {
	if c.IV == "" {
		return c.Cipher + "-" + c.Chain
	}
	return c.Cipher + "-" + c.Chain + "-" + c.IV
}

// Mode is the part after the cipher name ("xts-plain64"), as LUKS1 stores
// it in its cipher-mode field.
func (c CipherSpec) Mode() string {
	if c.IV == "" {
		return c.Chain
	}
	return c.Chain + "-" + c.IV
}

// cipherKeySize is the key length of the block cipher itself for a volume
// key of keyBytes: XTS halves the key, LRW appends a 16-byte tweak key.
func (c CipherSpec) cipherKeySize(keyBytes int) int {
	switch c.Chain {
	case "adiantum":
		return adiantum.KeySize
	case "xts":
		return keyBytes / 2
	case "lrw":
		return keyBytes - 16
	}
	return keyBytes
}

// Check reports whether the cipher is built in and takes a volume key of
// keyBytes bytes in this mode.
func (c CipherSpec) Check(keyBytes int) error {
	if c.Chain == "adiantum" {
		if _, err := adiantumRounds(c.Cipher); err != nil {
			return fmt.Errorf("cipher %s: %v", c, err)
		}
		if keyBytes != adiantum.KeySize {
			return fmt.Errorf("cipher %s takes a 256-bit key, not %d bits", c, keyBytes*8)
		}
		return nil
	}
	spec, err := ciphers.Lookup(c.Cipher)
	if err != nil {
		return fmt.Errorf("cipher %s: %w", c, err)
	}
	if c.Chain == "xts" && keyBytes%2 != 0 {
		return fmt.Errorf("cipher %s: an XTS key has two halves, %d bytes is odd", c, keyBytes)
	}
	if (c.Chain == "xts" || c.Chain == "lrw") && spec.BlockSize != 16 {
		return fmt.Errorf("cipher %s: %s needs a 16-byte block cipher", c, c.Chain)
	}
	n := c.cipherKeySize(keyBytes)
	for _, k := range spec.KeySizes {
		if k == n {
			return nil
		}
	}
	return fmt.Errorf("cipher %s does not take a %d-bit key (%s accepts %s bytes per cipher key)",
		c, keyBytes*8, spec.Name, intsString(spec.KeySizes))
}

func intsString(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// NewMode keys the sector mode the specification describes with the volume
// (or keyslot) key, laid out as dm-crypt expects it. The mode numbers
// sectors of sectorSize bytes, and their IVs count 512-byte sectors, as
// cryptsetup maps LUKS segments (dm-crypt without iv_large_sectors): the
// IV of 4096-byte sector n is that of 512-byte sector 8n.
func (c CipherSpec) NewMode(key []byte, sectorSize int) (sector.Mode, error) {
	if err := c.Check(len(key)); err != nil {
		return nil, err
	}
	if sectorSize < 512 || sectorSize%512 != 0 {
		return nil, fmt.Errorf("cipher %s: sector size %d is not a multiple of 512", c, sectorSize)
	}
	stride := uint64(sectorSize / 512)
	if c.Chain == "adiantum" {
		return c.newAdiantum(key, sectorSize, stride)
	}
	spec, _ := ciphers.Lookup(c.Cipher)
	iv, err := c.ivGenerator(spec, key)
	if err != nil {
		return nil, err
	}
	iv = sector.Stride(iv, stride)
	switch c.Chain {
	case "xts":
		half := len(key) / 2
		k1, err := spec.New(key[:half])
		if err != nil {
			return nil, err
		}
		k2, err := spec.New(key[half:])
		if err != nil {
			return nil, err
		}
		return sector.NewXTSWithIV(k1, k2, iv, sectorSize)
	case "lrw":
		// dm-crypt's lrw(cipher) key is the cipher key followed by the
		// 16-byte multiplication (tweak) key.
		n := len(key) - 16
		b, err := spec.New(key[:n])
		if err != nil {
			return nil, err
		}
		return sector.NewLRW(b, key[n:], iv, sectorSize)
	case "cbc":
		b, err := spec.New(key)
		if err != nil {
			return nil, err
		}
		return sector.NewCBC(b, iv, sectorSize)
	case "ecb":
		b, err := spec.New(key)
		if err != nil {
			return nil, err
		}
		return sector.NewECB(b, sectorSize)
	}
	return nil, fmt.Errorf("cipher %s: unsupported mode", c)
}

// newAdiantum keys dm-crypt's adiantum(xchacha12|20,aes): the whole
// 32-byte key is the XChaCha key, and the IV generator's 32-byte output
// is each sector's tweak.
func (c CipherSpec) newAdiantum(key []byte, sectorSize int, stride uint64) (sector.Mode, error) {
	rounds, err := adiantumRounds(c.Cipher)
	if err != nil {
		return nil, err
	}
	iv, err := adiantumIV(c.IV)
	if err != nil {
		return nil, err
	}
	a, err := adiantum.New(key, rounds)
	if err != nil {
		return nil, err
	}
	return sector.NewAdiantum(a, sector.Stride(iv, stride), sectorSize)
}

// adiantumRounds reads the stream cipher of an Adiantum cipher name: the
// two cryptsetup knows (lib/crypto_backend: xchacha12,aes and
// xchacha20,aes).
func adiantumRounds(cipher string) (int, error) {
	switch cipher {
	case "xchacha12,aes":
		return 12, nil
	case "xchacha20,aes":
		return 20, nil
	}
	return 0, fmt.Errorf("adiantum needs xchacha12,aes or xchacha20,aes, not %q", cipher)
}

// adiantumIV: Adiantum's 32-byte tweak takes only the keyless IVs
// (dm-crypt's essiv and benbi want a 16-byte block cipher IV).
func adiantumIV(name string) (sector.StandardIV, error) {
	iv, err := sector.LookupIV(name)
	if err == nil && (iv == sector.IVPlain64 || iv == sector.IVPlain || iv == sector.IVPlain64BE) {
		return iv, nil
	}
	return 0, fmt.Errorf("adiantum takes the plain64, plain or plain64be IV generator, not %q", name)
}

// ivGenerator builds the IV generator; ESSIV hashes the whole key dm-crypt
// is given (both XTS halves) and keys the same cipher with the digest.
func (c CipherSpec) ivGenerator(spec ciphers.Spec, key []byte) (sector.IVGenerator, error) {
	if c.IV == "" {
		return sector.IVNull, nil
	}
	if h, ok := strings.CutPrefix(c.IV, "essiv:"); ok {
		hf, err := essivHash(h)
		if err != nil {
			return nil, err
		}
		return sector.ESSIV(spec.New, hf, key)
	}
	return sector.LookupIV(c.IV)
}

// essivHash resolves an ESSIV hash name, including the kernel's truncated
// Whirlpool variants wp256 and wp384.
func essivHash(name string) (hash.Hash, error) {
	switch strings.ToLower(name) {
	case "wp256":
		return sector.TruncatedHash(hashes.MustLookup(hashes.Whirlpool).New(), 32), nil
	case "wp384":
		return sector.TruncatedHash(hashes.MustLookup(hashes.Whirlpool).New(), 48), nil
	}
	h, err := lookupHash(name)
	if err != nil {
		return nil, err
	}
	return h.New(), nil
}

// lookupHash resolves a hash name as LUKS headers spell it ("sha256",
// "ripemd160", "whirlpool", ...).
func lookupHash(name string) (hashes.Spec, error) {
	h, err := hashes.Lookup(name)
	if err != nil {
		return hashes.Spec{}, fmt.Errorf("unsupported hash %q", name)
	}
	return h, nil
}
