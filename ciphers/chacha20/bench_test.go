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
