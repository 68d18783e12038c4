package bitlk

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/cryptvol/cryptvol/internal/cputime"
	"github.com/cryptvol/cryptvol/sector"
)

// BenchmarkStretch is one protector's key stretch, 2^20 rounds (2^21
// SHA-256 blocks), with each kernel this machine runs; "default" is the
// one stretch uses. bench_vs_cryptsetup.sh sets it beside cryptsetup's.
func BenchmarkStretch(b *testing.B) {
	run := func(b *testing.B, k kernel) {
		var initial [32]byte
		var salt [16]byte
		cpu0 := cputime.ProcessSeconds()
		for i := 0; i < b.N; i++ {
			if _, err := stretchRounds(context.Background(), &initial, &salt, StretchRounds, k); err != nil {
				b.Fatal(err)
			}
		}
		// CPU time, as the comparison with cryptsetup (which a busy
		// machine slows down as much) uses.
		if cpu := cputime.ProcessSeconds() - cpu0; cpu > 0 {
			b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
			b.ReportMetric(cpu*1e9/float64(b.N)/float64(2*StretchRounds), "cpu-ns/block")
		}
	}
	b.Run("default", func(b *testing.B) { run(b, stretchKernel) })
	for _, k := range kernels() {
		b.Run(k.String(), func(b *testing.B) { run(b, k) })
	}
}

func benchMode(b *testing.B, method Method, ss int, decrypt bool) {
	key := make([]byte, 64)
	rand.Read(key)
	m, _, err := newMode(method, key, ss)
	if err != nil {
		b.Fatal(err)
	}
	// As the Volume runs it: runs split over GOMAXPROCS workers (-cpu 1
	// gives one thread).
	m = sector.Parallel(m, 0)
	buf := make([]byte, 4<<20)
	b.SetBytes(int64(len(buf)))
	cpu0 := cputime.ProcessSeconds()
	for i := 0; i < b.N; i++ {
		if decrypt {
			m.Decrypt(buf, buf, uint64(i))
		} else {
			m.Encrypt(buf, buf, uint64(i))
		}
	}
	if cpu := cputime.ProcessSeconds() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)*float64(len(buf))/1e6/cpu, "MB/cpu-s")
	}
}

func BenchmarkDecryptXTS128(b *testing.B)      { benchMode(b, AESXTS128, 512, true) }
func BenchmarkDecryptCBC128(b *testing.B)      { benchMode(b, AESCBC128, 512, true) }
func BenchmarkDecryptElephant128(b *testing.B) { benchMode(b, AESCBC128Elephant, 512, true) }
func BenchmarkEncryptElephant128(b *testing.B) { benchMode(b, AESCBC128Elephant, 512, false) }
func BenchmarkDecryptCBC128x4K(b *testing.B)   { benchMode(b, AESCBC128, 4096, true) }
