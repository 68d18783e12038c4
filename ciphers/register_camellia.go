package ciphers

import "github.com/cryptvol/cryptvol/ciphers/camellia"

// Camellia has a fused XTS kernel; the sector layer finds it through this
// interface.
var _ XTSBlock = (*camellia.Cipher)(nil)

func init() {
	Register(Spec{
		Impl:      camellia.Implementation,
		Name:      "Camellia",
		BlockSize: camellia.BlockSize,
		KeySize:   32,
		KeySizes:  []int{16, 24, 32},
		New: func(key []byte) (Block, error) {
			c, err := camellia.New(key)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
	})
}
