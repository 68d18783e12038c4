package tcrypt

import (
	"fmt"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/sector"
	"github.com/cryptvol/cryptvol/volume"
)

// A scheme is a cipher chain in one mode of operation, as a header or a
// data area may be encrypted with it.
type scheme struct {
	Chain ciphers.Chain
	Mode  string // "xts", "lrw" or "cbc"
}

// Name is the chain's VeraCrypt name.
func (s scheme) Name() string { return s.Chain.Name }

// keyBytes is how many bytes of the master key area the scheme uses.
func (s scheme) keyBytes() int {
	n := 0
	for _, name := range s.Chain.Ciphers {
		spec, _ := ciphers.Lookup(name)
		n += spec.KeySize
	}
	switch s.Mode {
	case "xts":
		return 2 * n
	default: // lrw, cbc: a 32-byte tweak key/IV seed area precedes the cipher keys
		return 32 + n
	}
}

// lrwChains and cbcChains are the chains TrueCrypt 4.x/5.x offered in those
// modes; XTS volumes may use any current chain.
var (
	lrwChains = []string{"AES", "Serpent", "Twofish", "AES-Twofish", "AES-Twofish-Serpent",
		"Serpent-AES", "Serpent-Twofish-AES", "Twofish-Serpent"}
	cbcChains = []string{"AES", "Serpent", "Twofish", "AES-Twofish", "AES-Twofish-Serpent",
		"Serpent-AES", "Serpent-Twofish-AES", "Twofish-Serpent",
		"Blowfish", "CAST5", "Triple DES", "AES-Blowfish", "AES-Blowfish-Serpent"}
)

// schemes lists what to try on a header: every current chain in XTS, and
// for TrueCrypt headers also the legacy LRW and CBC schemes.
func schemes(encryption string, legacy bool) ([]scheme, error) {
	var want string
	if encryption != "" {
		c, err := ciphers.LookupChain(encryption)
		if err != nil {
			return nil, volume.InvalidOption(err) // --encryption names no chain
		}
		want = c.Name
	}
	var out []scheme
	add := func(name, mode string) {
		if want != "" && name != want {
			return
		}
		c, err := ciphers.LookupChain(name)
		if err != nil {
			return
		}
		for _, n := range c.Ciphers {
			if _, err := ciphers.Lookup(n); err != nil {
				return // cipher not built in
			}
		}
		out = append(out, scheme{Chain: c, Mode: mode})
	}
	for _, c := range ciphers.Chains() {
		add(c.Name, "xts")
	}
	if legacy {
		for _, n := range lrwChains {
			add(n, "lrw")
		}
		for _, n := range cbcChains {
			add(n, "cbc")
		}
	}
	return out, nil
}

// newCiphers keys each cipher of the chain from consecutive key bytes.
func newCiphers(c ciphers.Chain, key []byte) ([]ciphers.Block, error) {
	var out []ciphers.Block
	off := 0
	for _, name := range c.Ciphers {
		spec, err := ciphers.Lookup(name)
		if err != nil {
			return nil, err
		}
		if off+spec.KeySize > len(key) {
			return nil, fmt.Errorf("key too short for %s", c.Name)
		}
		b, err := spec.New(key[off : off+spec.KeySize])
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		off += spec.KeySize
	}
	return out, nil
}

// xtsMode builds VeraCrypt's per-cipher XTS cascade (sector.ChainXTS).
func xtsMode(c ciphers.Chain, key []byte, unitSize int) (sector.Mode, error) {
	return sector.ChainXTS(c, key, unitSize)
}

// lrwMode builds the cascade of per-cipher LRW modes: every cipher shares
// the 16-byte tweak key at the start of the key area, and the cipher keys
// follow from byte 32. The block index counts 16-byte blocks from 1 at the
// start of the data area (dm-crypt's "benbi" IV).
func lrwMode(c ciphers.Chain, key []byte, unitSize int) (sector.Mode, error) {
	bs, err := newCiphers(c, key[32:])
	if err != nil {
		return nil, err
	}
	modes := make([]sector.Mode, len(bs))
	for i, b := range bs {
		if modes[i], err = sector.NewLRW(b, key[:16], sector.IVBenbi, unitSize); err != nil {
			return nil, err
		}
	}
	if len(modes) == 1 {
		return modes[0], nil
	}
	return sector.Cascade(modes...), nil
}

// cbcMode builds TrueCrypt's legacy CBC: the 32-byte IV/whitening seed, then
// the cipher keys.
func cbcMode(c ciphers.Chain, key []byte) (*legacyCBC, error) {
	bs, err := newCiphers(c, key[32:])
	if err != nil {
		return nil, err
	}
	return newLegacyCBC(bs, key[:32]), nil
}

// dataMode builds the sector mode for the data area from the master key.
func (s scheme) dataMode(masterKey []byte) (sector.Mode, error) {
	switch s.Mode {
	case "xts":
		return xtsMode(s.Chain, masterKey, dataUnitSize)
	case "lrw":
		return lrwMode(s.Chain, masterKey, dataUnitSize)
	case "cbc":
		return cbcMode(s.Chain, masterKey)
	}
	return nil, fmt.Errorf("unknown mode %q", s.Mode)
}

// decryptHeader decrypts the 448 encrypted header bytes in place with the
// header key under this scheme.
func (s scheme) decryptHeader(buf, headerKey []byte) error {
	switch s.Mode {
	case "xts":
		m, err := xtsMode(s.Chain, headerKey, encryptedSize)
		if err != nil {
			return err
		}
		m.Decrypt(buf, buf, 0)
	case "lrw":
		m, err := lrwMode(s.Chain, headerKey, encryptedSize)
		if err != nil {
			return err
		}
		// The header is LRW-encrypted from block index 1, which is what
		// "sector 0" means under the benbi numbering.
		m.Decrypt(buf, buf, 0)
	case "cbc":
		m, err := cbcMode(s.Chain, headerKey)
		if err != nil {
			return err
		}
		m.decryptHeader(buf)
	default:
		return fmt.Errorf("unknown mode %q", s.Mode)
	}
	return nil
}

// encryptHeader is the inverse of decryptHeader; only XTS headers are
// written (cryptvol never writes legacy volumes).
func (s scheme) encryptHeader(buf, headerKey []byte) error {
	if s.Mode != "xts" {
		return fmt.Errorf("writing %s headers is not supported", s.Mode)
	}
	m, err := xtsMode(s.Chain, headerKey, encryptedSize)
	if err != nil {
		return err
	}
	m.Encrypt(buf, buf, 0)
	return nil
}
