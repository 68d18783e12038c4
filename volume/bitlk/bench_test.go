package bitlk

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/cryptvol/cryptvol/sector"
)

// BenchmarkStretch is one protector's key stretch: 2^20 rounds, 2^21
// SHA-256 blocks. cryptsetup's own is measured beside it by
// bench_vs_cryptsetup.sh.
func BenchmarkStretch(b *testing.B) {
	var initial [32]byte
	var salt [16]byte
	for i := 0; i < b.N; i++ {
		if _, err := stretch(context.Background(), &initial, &salt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*StretchRounds), "ns/block")
}

func benchMode(b *testing.B, method Method, ss int, decrypt bool) {
	key := make([]byte, 64)
	rand.Read(key)
	m, _, err := newMode(method, key, ss)
	if err != nil {
		b.Fatal(err)
	}
	m = sector.Parallel(m, 0)
	buf := make([]byte, 4<<20)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		if decrypt {
			m.Decrypt(buf, buf, uint64(i))
		} else {
			m.Encrypt(buf, buf, uint64(i))
		}
	}
}

func BenchmarkDecryptXTS128(b *testing.B)      { benchMode(b, AESXTS128, 512, true) }
func BenchmarkDecryptCBC128(b *testing.B)      { benchMode(b, AESCBC128, 512, true) }
func BenchmarkDecryptElephant128(b *testing.B) { benchMode(b, AESCBC128Elephant, 512, true) }
func BenchmarkEncryptElephant128(b *testing.B) { benchMode(b, AESCBC128Elephant, 512, false) }
func BenchmarkDecryptCBC128x4K(b *testing.B)   { benchMode(b, AESCBC128, 4096, true) }
