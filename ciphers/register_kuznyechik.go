package ciphers

import "github.com/cryptvol/cryptvol/ciphers/kuznyechik"

func init() {
	Register(Spec{
		Impl:      kuznyechik.Implementation,
		Name:      "Kuznyechik",
		BlockSize: kuznyechik.BlockSize,
		KeySize:   kuznyechik.KeySize,
		KeySizes:  []int{kuznyechik.KeySize},
		New: func(key []byte) (Block, error) {
			c, err := kuznyechik.New(key)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
	})
}
