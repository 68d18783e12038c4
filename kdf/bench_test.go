package kdf

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/internal/cputime"
	"github.com/cryptvol/cryptvol/kdf/internal/lanes"
)

// BenchmarkPBKDF2 reports PBKDF2 iterations per second for each PRF,
// deriving a 256-bit key on one goroutine: the figure `cryptsetup benchmark
// --pbkdf pbkdf2 --hash H` prints ("iterations per second for 256-bit
// key"), so the two can be compared directly. For 160-bit hashes a 256-bit
// key takes two PBKDF2 blocks, as in cryptsetup.
func BenchmarkPBKDF2(b *testing.B) {
	for _, spec := range hashes.All() {
		b.Run(spec.Name, func(b *testing.B) {
			benchPBKDF2(b, spec, 32, 1)
		})
	}
}

// BenchmarkPBKDF2VeraCryptHeader derives VeraCrypt's 192-byte header key
// (several PBKDF2 blocks) with all cores, as the volume driver does.
func BenchmarkPBKDF2VeraCryptHeader(b *testing.B) {
	for _, name := range []string{hashes.SHA512, hashes.Whirlpool, hashes.SHA256, hashes.RIPEMD160} {
		b.Run(name, func(b *testing.B) {
			benchPBKDF2(b, hashes.MustLookup(name), 192, 0)
		})
	}
}

func benchPBKDF2(b *testing.B, spec hashes.Spec, keyLen, workers int) {
	if workers > 0 {
		saved := maxParallel
		maxParallel = func() int { return workers }
		defer func() { maxParallel = saved }()
	}
	const iterations = 20000
	pw, salt := []byte("aaaaaaaaaaaa"), make([]byte, 64)
	b.ReportAllocs()
	cpu0 := cputime.ProcessSeconds()
	for i := 0; i < b.N; i++ {
		PBKDF2(spec, pw, salt, iterations, keyLen)
	}
	total := float64(iterations) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "iter/s")
	if cpu := cputime.ProcessSeconds() - cpu0; cpu > 0 {
		// Per CPU-second, cryptsetup's clock; only meaningful single-threaded.
		b.ReportMetric(total/cpu, "iter/cpu-s")
	}
}

// BenchmarkPBKDF2Paths derives a VeraCrypt header key (192 bytes, 20,000
// iterations) on one core through each lane kernel this CPU has, the
// dispatched set and the one-chain-at-a-time path ("none"), to choose
// between them by measurement (run it under GODEBUG masks too).
func BenchmarkPBKDF2Paths(b *testing.B) {
	for _, lh := range []lanes.Hash{lanes.SHA512, lanes.SHA256, lanes.RIPEMD160, lanes.BLAKE2s256} {
		spec := hashes.MustLookup(lh.String())
		sets := kernelSets(lh)
		for _, name := range slices.Sorted(maps.Keys(sets)) {
			b.Run(lh.String()+"/"+name, func(b *testing.B) {
				saved := kernelsFor
				kernelsFor = func(lanes.Hash) []*lanes.Kernel { return sets[name] }
				defer func() { kernelsFor = saved }()
				benchPBKDF2(b, spec, 192, 1)
			})
		}
	}
}

// BenchmarkDeriveMany derives VeraCrypt header keys (192 bytes, 20,000
// iterations) for 1, 2 and 3 salts at once (normal, hidden, backup
// header) with all cores (GOMAXPROCS; -cpu 1,2 compares), as a volume
// driver does: the extra keys fill lanes and cores that one leaves idle.
// key-ms is the wall time per key, key-cpu-ms the CPU time per key.
func BenchmarkDeriveMany(b *testing.B) {
	for _, prf := range []string{hashes.SHA512, hashes.SHA256, hashes.Whirlpool} {
		for _, n := range []int{1, 2, 3} {
			b.Run(fmt.Sprintf("%s/%d", prf, n), func(b *testing.B) {
				p := Params{Kind: KindPBKDF2, PRF: prf, Iterations: 20000}
				salts := make([][]byte, n)
				for i := range salts {
					salts[i] = bytes.Repeat([]byte{byte(i)}, 64)
				}
				cpu0 := cputime.ProcessSeconds()
				for range b.N {
					if _, err := DeriveMany(context.Background(), p, []byte("pw"), salts, 192); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N*n), "key-ms")
				b.ReportMetric((cputime.ProcessSeconds()-cpu0)*1e3/float64(b.N*n), "key-cpu-ms")
			})
		}
	}
}
