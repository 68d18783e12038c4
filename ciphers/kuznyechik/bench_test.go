package kuznyechik

import (
	"fmt"
	"testing"
)

// Compare with `openssl speed -provider gostprov -evp kuznyechik-ecb -bytes
// 4096` (the GOST provider of libengine-gost-openssl) run in the same
// session: bench_vs_openssl.sh does both. botan 2.19 has no Kuznyechik.

func BenchmarkEncrypt(b *testing.B) { benchmarkBlocks(b, false) }
func BenchmarkDecrypt(b *testing.B) { benchmarkBlocks(b, true) }

func benchmarkBlocks(b *testing.B, decrypt bool) {
	c, _ := New(make([]byte, 32))
	for _, size := range []int{4096, 1 << 20} {
		b.Run(fmt.Sprintf("%dK", size>>10), func(b *testing.B) {
			buf := make([]byte, size)
			measure(b, size, func() {
				if decrypt {
					c.DecryptBlocks(buf, buf)
				} else {
					c.EncryptBlocks(buf, buf)
				}
			})
		})
	}
}
