package ciphers

import "github.com/cryptvol/cryptvol/ciphers/aes"

// AES is the one cipher every format here uses: VeraCrypt/TrueCrypt with
// 256-bit keys, LUKS with 128-, 192- or 256-bit keys.
func init() {
	Register(Spec{
		Name:      "AES",
		BlockSize: aes.BlockSize,
		KeySize:   32,
		KeySizes:  []int{16, 24, 32},
		Impl:      aes.Implementation,
		New: func(key []byte) (Block, error) {
			c, err := aes.New(key)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
	})
}

// The fused XTS kernel must stay visible to the sector layer.
var _ XTSPlain64Block = (*aes.Cipher)(nil)
