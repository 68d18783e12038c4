package camellia

import (
	"fmt"
	"testing"
)

// Benchmarks per code path with a 256-bit key (VeraCrypt's). Compare with
// `openssl speed -evp camellia-256-ecb -bytes 4096` run in the same session:
// bench_vs_openssl.sh does both.

func BenchmarkEncrypt(b *testing.B) { benchmarkBlocks(b, false) }
func BenchmarkDecrypt(b *testing.B) { benchmarkBlocks(b, true) }

func benchmarkBlocks(b *testing.B, decrypt bool) {
	c, _ := New(make([]byte, 32))
	for _, im := range implementations() {
		for _, size := range []int{4096, 1 << 20} {
			b.Run(fmt.Sprintf("%s/%dK", im.name, size>>10), func(b *testing.B) {
				restore := im.use()
				defer restore()
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
}

// BenchmarkEncryptXTS is the fused XTS path with 512-byte sectors (the
// initial tweaks are given, as the sector layer passes them).
func BenchmarkEncryptXTS(b *testing.B) {
	c, _ := New(make([]byte, 32))
	for _, im := range implementations() {
		for _, size := range []int{4096, 1 << 20} {
			b.Run(fmt.Sprintf("%s/%dK", im.name, size>>10), func(b *testing.B) {
				restore := im.use()
				defer restore()
				buf := make([]byte, size)
				tweaks := make([]byte, size/512*16)
				measure(b, size, func() { c.EncryptXTS(buf, buf, tweaks, 512) })
			})
		}
	}
}
