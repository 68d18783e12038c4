package chacha20

import (
	"fmt"
	"testing"

	xchacha20 "golang.org/x/crypto/chacha20"
)

// BenchmarkXORKeyStream runs this package's cipher beside x/crypto's on
// the same buffer sizes; `cryptvol benchmark enc --vs-openssl` compares
// it with openssl enc in one run.
func BenchmarkXORKeyStream(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10} {
		buf := make([]byte, size)
		b.Run("cryptvol/"+sizeName(size), func(b *testing.B) {
			c, _ := New(make([]byte, KeySize), make([]byte, NonceSize), 0)
			b.SetBytes(int64(size))
			for b.Loop() {
				c.XORKeyStream(buf, buf)
			}
		})
		b.Run("x-crypto/"+sizeName(size), func(b *testing.B) {
			c, _ := xchacha20.NewUnauthenticatedCipher(make([]byte, KeySize), make([]byte, NonceSize))
			b.SetBytes(int64(size))
			for b.Loop() {
				c.XORKeyStream(buf, buf)
			}
		})
	}
}

func sizeName(n int) string { return fmt.Sprintf("%dKiB", n>>10) }

// BenchmarkKernels runs each kernel this CPU has, alone, over 4 KiB (an
// Adiantum sector) with ChaCha12 and ChaCha20, beside x/crypto's
// ChaCha20 on the same buffer.
func BenchmarkKernels(b *testing.B) {
	buf := make([]byte, 4096)
	for _, rounds := range []int{12, 20} {
		for _, k := range allKernels() {
			b.Run(fmt.Sprintf("%s/%d", k.name, rounds), func(b *testing.B) {
				var st [16]uint32
				b.SetBytes(int64(len(buf)))
				for b.Loop() {
					k.xor(&st, rounds, buf, buf)
				}
			})
		}
	}
	b.Run("x-crypto/20", func(b *testing.B) {
		c, _ := xchacha20.NewUnauthenticatedCipher(make([]byte, KeySize), make([]byte, NonceSize))
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			c.XORKeyStream(buf, buf)
		}
	})
}

// BenchmarkXKey is one Adiantum sector's stream: HChaCha, then 4 KiB.
func BenchmarkXKey(b *testing.B) {
	buf := make([]byte, 4096)
	var nonce [XNonceSize]byte
	for _, rounds := range []int{12, 20} {
		b.Run(fmt.Sprint(rounds), func(b *testing.B) {
			k, _ := NewXKey(make([]byte, KeySize), rounds)
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				k.XORKeyStream(buf, buf, &nonce)
			}
		})
	}
}
