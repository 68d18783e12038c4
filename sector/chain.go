package sector

import (
	"fmt"

	"github.com/cryptvol/cryptvol/ciphers"
)

// ChainXTS builds XTS over a TrueCrypt/VeraCrypt cipher chain: each cipher
// runs its own XTS pass over the whole data unit, in the chain's encryption
// order. With n ciphers of key sizes k_i, the key holds the n primary keys
// back to back, then the n tweak keys in the same order (VeraCrypt's master
// key layout). unitSize is the data unit (512 for volumes, 448 for headers).
func ChainXTS(c ciphers.Chain, key []byte, unitSize int) (Mode, error) {
	half := 0
	specs := make([]ciphers.Spec, len(c.Ciphers))
	for i, name := range c.Ciphers {
		s, err := ciphers.Lookup(name)
		if err != nil {
			return nil, err
		}
		specs[i] = s
		half += s.KeySize
	}
	if len(key) < 2*half {
		return nil, fmt.Errorf("sector: %s-XTS needs %d key bytes, got %d", c.Name, 2*half, len(key))
	}
	modes := make([]Mode, len(specs))
	off := 0
	for i, s := range specs {
		k1, err := s.New(key[off : off+s.KeySize])
		if err != nil {
			return nil, err
		}
		k2, err := s.New(key[half+off : half+off+s.KeySize])
		if err != nil {
			return nil, err
		}
		if modes[i], err = NewXTS(k1, k2, unitSize); err != nil {
			return nil, err
		}
		off += s.KeySize
	}
	if len(modes) == 1 {
		return modes[0], nil
	}
	return Cascade(modes...), nil
}

// ChainKeySize is the XTS key size of a chain in bytes (two keys per
// cipher).
func ChainKeySize(c ciphers.Chain) (int, error) {
	n, err := c.KeySize()
	return 2 * n, err
}
