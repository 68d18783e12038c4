package bench

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/internal/cputime"
	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/sector"
)

// BenchmarkXTS4K encrypts and decrypts a 4 KiB buffer (eight 512-byte data
// units) with XTS on one goroutine, the configuration of the project's
// speed floor: compare with `openssl speed -bytes 4096 -evp aes-256-xts`
// and `botan speed --buf-size=4096 'XTS(Serpent)' 'XTS(Twofish)'`
// (internal/cmd/speedcheck runs all three and prints the ratios). Besides
// MB/s (wall clock) it reports cpu-MB/s, bytes per CPU second, the clock
// openssl speed uses.
func BenchmarkXTS4K(b *testing.B) {
	for _, name := range []string{"AES", "Serpent", "Twofish"} {
		for _, dir := range []string{"encrypt", "decrypt"} {
			b.Run(name+"/"+dir, func(b *testing.B) {
				benchXTS(b, name, dir == "decrypt", 4096)
			})
		}
	}
}

func benchXTS(b *testing.B, name string, decrypt bool, size int) {
	c, err := ciphers.LookupChain(name)
	if err != nil {
		b.Fatal(err)
	}
	n, err := sector.ChainKeySize(c)
	if err != nil {
		b.Fatal(err)
	}
	key := make([]byte, n)
	rand.Read(key)
	m, err := sector.ChainXTS(c, key, SectorSize)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, size)
	rand.Read(buf)
	m.Encrypt(buf, buf, 0) // warm the scratch pools
	b.SetBytes(int64(size))
	b.ReportAllocs()
	cpu0 := cputime.ProcessSeconds()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if decrypt {
			m.Decrypt(buf, buf, uint64(i))
		} else {
			m.Encrypt(buf, buf, uint64(i))
		}
	}
	b.StopTimer()
	if cpu := cputime.ProcessSeconds() - cpu0; cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/cpu/1e6, "cpu-MB/s")
	}
}

// BenchmarkPBKDF2 reports HMAC iterations per second of each TrueCrypt and
// VeraCrypt PRF computing one output block on one goroutine, the rate
// `cryptvol benchmark kdf` prints.
func BenchmarkPBKDF2(b *testing.B) {
	for _, name := range allPRFs() {
		if name == kdf.Argon2idPRF {
			continue
		}
		h := hashes.MustLookup(name)
		b.Run(h.Name, func(b *testing.B) {
			const iterations = 10000
			pw, salt := []byte("benchmark password"), make([]byte, 64)
			b.ReportAllocs()
			cpu0 := cputime.ProcessSeconds()
			for b.Loop() {
				if _, err := kdf.PBKDF2Context(context.Background(), h, pw, salt, iterations, h.Size); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			total := float64(iterations) * float64(b.N)
			b.ReportMetric(total/b.Elapsed().Seconds(), "iter/s")
			if cpu := cputime.ProcessSeconds() - cpu0; cpu > 0 {
				b.ReportMetric(total/cpu, "iter/cpu-s")
			}
		})
	}
}
