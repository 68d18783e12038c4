package ciphers

import "github.com/cryptvol/cryptvol/ciphers/legacy"

func init() {
	blowfishKeys := make([]int, 0, legacy.BlowfishMaxKeySize-legacy.BlowfishMinKeySize+1)
	for n := legacy.BlowfishMinKeySize; n <= legacy.BlowfishMaxKeySize; n++ {
		blowfishKeys = append(blowfishKeys, n)
	}
	cast5Keys := make([]int, 0, legacy.CAST5MaxKeySize-legacy.CAST5MinKeySize+1)
	for n := legacy.CAST5MinKeySize; n <= legacy.CAST5MaxKeySize; n++ {
		cast5Keys = append(cast5Keys, n)
	}

	// Standard big-endian Blowfish, as OpenSSL ("bf") and the Linux kernel
	// ("blowfish", hence LUKS) use it; 16 bytes is OpenSSL's bf-cbc default.
	Register(Spec{
		Impl:      legacy.Implementation,
		Name:      "Blowfish-BE",
		Aliases:   []string{"bf", "blowfish"},
		BlockSize: legacy.BlockSize,
		KeySize:   16,
		KeySizes:  blowfishKeys,
		Legacy:    true,
		New: func(key []byte) (Block, error) {
			c, err := legacy.NewBlowfishBE(key)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
	})
	// TrueCrypt's little-endian Blowfish with its 448-bit keys (cryptsetup
	// calls it "blowfish_le").
	Register(Spec{
		Impl:      legacy.Implementation,
		Name:      "Blowfish-LE",
		Aliases:   []string{"blowfish_le"},
		BlockSize: legacy.BlockSize,
		KeySize:   legacy.BlowfishMaxKeySize,
		KeySizes:  blowfishKeys,
		Legacy:    true,
		New: func(key []byte) (Block, error) {
			c, err := legacy.NewBlowfishLE(key)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
	})
	Register(Spec{
		Impl:      legacy.Implementation,
		Name:      "CAST5",
		Aliases:   []string{"cast-128", "cast128"},
		BlockSize: legacy.BlockSize,
		KeySize:   legacy.CAST5MaxKeySize,
		KeySizes:  cast5Keys,
		Legacy:    true,
		New: func(key []byte) (Block, error) {
			c, err := legacy.NewCAST5(key)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
	})
	Register(Spec{
		Impl:      legacy.Implementation,
		Name:      "Triple DES",
		Aliases:   []string{"des3_ede", "3des", "des-ede3", "TripleDES"},
		BlockSize: legacy.BlockSize,
		KeySize:   legacy.TripleDESKeySize,
		KeySizes:  []int{legacy.TripleDESKeySize},
		Legacy:    true,
		New: func(key []byte) (Block, error) {
			c, err := legacy.NewTripleDES(key)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
	})
}
