package aes

import (
	stdaes "crypto/aes"
	"encoding/binary"
	"testing"

	"golang.org/x/crypto/xts"

	"github.com/cryptvol/cryptvol/internal/cputime"
)

// Benchmarks per implementation, AES-256 (the cipher TrueCrypt/VeraCrypt
// use). Compare with `openssl speed -evp aes-256-xts -bytes 4096` run in the
// same session (bench_vs_openssl.sh does both); "XTS+tweak" also encrypts
// the per-sector tweaks, as openssl and the sector layer must.
//
// Besides MB/s (wall time) each benchmark reports cpuMB/s, bytes per second
// of process CPU time: openssl speed divides by CPU time too, and on a
// shared machine wall time mostly measures the neighbours.

// measure runs f in a b.Loop and reports throughput per CPU second.
func measure(b *testing.B, bytes int, f func()) {
	b.SetBytes(int64(bytes))
	start := cputime.Process()
	for b.Loop() {
		f()
	}
	if cpu := cputime.Process() - start; cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/cpu.Seconds()/1e6, "cpuMB/s")
	}
}

type benchShape struct {
	name       string
	size       int // bytes per call
	sectorSize int
}

var benchShapes = []benchShape{
	{"1x4096", 4096, 4096},
	{"8x512", 4096, 512},
	{"1MiB-4096", 1 << 20, 4096},
}

func BenchmarkAES(b *testing.B) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	for _, impl := range supportedImpls() {
		c, _ := newWithImpl(key, impl)
		k2, _ := newWithImpl(key, impl)
		b.Run(impl.String(), func(b *testing.B) {
			for _, n := range []int{4096, 1 << 20} {
				buf := make([]byte, n)
				b.Run("EncryptBlocks/"+sizeName(n), func(b *testing.B) {
					measure(b, n, func() {
						c.EncryptBlocks(buf, buf)
					})
				})
				b.Run("DecryptBlocks/"+sizeName(n), func(b *testing.B) {
					measure(b, n, func() {
						c.DecryptBlocks(buf, buf)
					})
				})
				iv := make([]byte, 16)
				b.Run("EncryptCBC/"+sizeName(n), func(b *testing.B) {
					measure(b, n, func() {
						c.EncryptCBC(buf, buf, iv)
					})
				})
			}
			for _, s := range benchShapes {
				buf := make([]byte, s.size)
				tweaks := make([]byte, 16*(s.size/s.sectorSize))
				k2.EncryptBlocks(tweaks, tweaks)
				b.Run("EncryptXTS/"+s.name, func(b *testing.B) {
					measure(b, s.size, func() {
						c.EncryptXTS(buf, buf, tweaks, s.sectorSize)
					})
				})
				b.Run("DecryptXTS/"+s.name, func(b *testing.B) {
					measure(b, s.size, func() {
						c.DecryptXTS(buf, buf, tweaks, s.sectorSize)
					})
				})
				// The plain64 methods, which derive the tweaks themselves
				// (the sector layer's path for xts-plain64).
				b.Run("EncryptXTSPlain64/"+s.name, func(b *testing.B) {
					sector := uint64(0)
					measure(b, s.size, func() {
						c.EncryptXTSPlain64(buf, buf, k2, sector, s.sectorSize)
						sector += uint64(s.size / s.sectorSize)
					})
				})
				b.Run("DecryptXTSPlain64/"+s.name, func(b *testing.B) {
					sector := uint64(0)
					measure(b, s.size, func() {
						c.DecryptXTSPlain64(buf, buf, k2, sector, s.sectorSize)
						sector += uint64(s.size / s.sectorSize)
					})
				})
				b.Run("EncryptXTS+tweak/"+s.name, func(b *testing.B) {
					sector := uint64(0)
					measure(b, s.size, func() {
						for i := 0; i < len(tweaks); i += 16 {
							binary.LittleEndian.PutUint64(tweaks[i:], sector)
							binary.LittleEndian.PutUint64(tweaks[i+8:], 0)
							sector++
						}
						k2.EncryptBlocks(tweaks, tweaks)
						c.EncryptXTS(buf, buf, tweaks, s.sectorSize)
					})
				})
			}
		})
	}
}

// BenchmarkReference measures the standard library and x/crypto/xts on the
// same shapes, the baseline this package replaces.
func BenchmarkReference(b *testing.B) {
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i)
	}
	block, _ := stdaes.NewCipher(key[:32])
	x, _ := xts.NewCipher(stdaes.NewCipher, key)
	buf := make([]byte, 4096)
	b.Run("crypto-aes/EncryptBlocks/4KiB", func(b *testing.B) {
		measure(b, 4096, func() {
			for i := 0; i < len(buf); i += 16 {
				block.Encrypt(buf[i:], buf[i:])
			}
		})
	})
	for _, s := range benchShapes[:2] {
		b.Run("x-crypto-xts/Encrypt/"+s.name, func(b *testing.B) {
			measure(b, s.size, func() {
				for i := 0; i < s.size/s.sectorSize; i++ {
					x.Encrypt(buf[i*s.sectorSize:(i+1)*s.sectorSize], buf[i*s.sectorSize:(i+1)*s.sectorSize], uint64(i))
				}
			})
		})
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return "1MiB"
	}
	return "4KiB"
}
