package ciphers

import "github.com/cryptvol/cryptvol/ciphers/twofish"

func init() {
	Register(Spec{
		Name:      "Twofish",
		BlockSize: twofish.BlockSize,
		KeySize:   32,
		KeySizes:  []int{16, 24, 32},
		Impl:      twofish.Implementation,
		New: func(key []byte) (Block, error) {
			c, err := twofish.New(key)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
	})
}

// The fused XTS kernel must stay visible to the sector layer.
var _ XTSBlock = (*twofish.Cipher)(nil)
