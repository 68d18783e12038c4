package ciphers

import "github.com/cryptvol/cryptvol/ciphers/serpent"

// Serpent's *Cipher also implements XTSBlock (fused XTS kernels on amd64).
var _ XTSBlock = (*serpent.Cipher)(nil)

func init() {
	Register(Spec{
		Name:      "Serpent",
		BlockSize: serpent.BlockSize,
		KeySize:   32,
		KeySizes:  []int{16, 24, 32},
		Impl:      serpent.Implementation,
		New: func(key []byte) (Block, error) {
			c, err := serpent.New(key)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
	})
}
