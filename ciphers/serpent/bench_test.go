package serpent

import (
	"fmt"
	"testing"
)

func benchmarkBlocks(b *testing.B, decrypt bool) {
	saved := impl
	defer func() { impl = saved }()
	for _, i := range available() {
		for _, size := range []int{4096, 1 << 20} {
			b.Run(fmt.Sprintf("%s/%d", i.name(), size), func(b *testing.B) {
				impl = i
				c, _ := New(make([]byte, 32))
				buf := make([]byte, size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					if decrypt {
						c.DecryptBlocks(buf, buf)
					} else {
						c.EncryptBlocks(buf, buf)
					}
				}
			})
		}
	}
}

func BenchmarkEncryptBlocks(b *testing.B) { benchmarkBlocks(b, false) }
func BenchmarkDecryptBlocks(b *testing.B) { benchmarkBlocks(b, true) }

// BenchmarkXTS measures whole 4096-byte sectors through EncryptXTS and
// DecryptXTS (fused kernels where the path has them).
func BenchmarkXTS(b *testing.B) {
	saved := impl
	defer func() { impl = saved }()
	const sector, sectors = 4096, 1
	for _, i := range available() {
		for _, decrypt := range []bool{false, true} {
			dir := "encrypt"
			if decrypt {
				dir = "decrypt"
			}
			b.Run(i.name()+"/"+dir, func(b *testing.B) {
				impl = i
				c, _ := New(make([]byte, 32))
				buf := make([]byte, sector*sectors)
				tweaks := make([]byte, 16*sectors)
				tweaks[0] = 1
				b.SetBytes(int64(len(buf)))
				b.ReportAllocs()
				for b.Loop() {
					if decrypt {
						c.DecryptXTS(buf, buf, tweaks, sector)
					} else {
						c.EncryptXTS(buf, buf, tweaks, sector)
					}
				}
			})
		}
	}
}

// BenchmarkXTSComposed is XTS the way a caller without fused kernels does
// it: tweaks into a buffer, xor, EncryptBlocks, xor. It measures what the
// fused kernels gain.
func BenchmarkXTSComposed(b *testing.B) {
	saved := impl
	defer func() { impl = saved }()
	for _, i := range available() {
		for _, decrypt := range []bool{false, true} {
			dir := "encrypt"
			if decrypt {
				dir = "decrypt"
			}
			b.Run(i.name()+"/"+dir, func(b *testing.B) {
				impl = i
				c, _ := New(make([]byte, 32))
				buf := make([]byte, 4096)
				tweaks := make([]byte, 16)
				b.SetBytes(int64(len(buf)))
				b.ReportAllocs()
				for b.Loop() {
					xtsComposed(c, buf, buf, tweaks, 4096, decrypt)
				}
			})
		}
	}
}
