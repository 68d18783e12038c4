package opensslenc

import (
	"context"
	"io"
	"testing"

	"github.com/cryptvol/cryptvol/internal/cputime"
)

// benchCiphers are the seed experiment's ciphers plus the legacy ones.
var benchCiphers = []string{"aes-128-cbc", "aes-256-cbc", "aes-128-ctr", "aes-256-ctr", "aes-128-cfb", "aes-128-ofb",
	"chacha20", "rc4", "camellia-256-cbc", "des-ede3-cbc", "bf-cbc"}

// BenchmarkMode runs each mode over 256 KiB (Run's chunk) per call, the
// hot path of cryptvol enc. Besides MB/s it reports cpu-MB/s, bytes per
// CPU second. `cryptvol benchmark enc --vs-openssl` compares the whole
// command with openssl enc.
func BenchmarkMode(b *testing.B) {
	for _, name := range benchCiphers {
		c, err := LookupCipher(name)
		if err != nil {
			b.Fatal(err)
		}
		for _, dir := range []string{"encrypt", "decrypt"} {
			b.Run(name+"/"+dir, func(b *testing.B) {
				tr, err := c.newTransform(make([]byte, c.KeySize), make([]byte, c.IVSize), dir == "decrypt")
				if err != nil {
					b.Fatal(err)
				}
				src, dst := make([]byte, ChunkSize), make([]byte, ChunkSize)
				measure(b, ChunkSize, func() { tr.crypt(dst, src) })
			})
		}
	}
}

// BenchmarkRun is the whole engine, memory to io.Discard, 16 MiB per op.
func BenchmarkRun(b *testing.B) {
	const size = 16 << 20
	for _, name := range []string{"aes-256-cbc", "aes-256-ctr"} {
		c, _ := LookupCipher(name)
		for _, decrypt := range []bool{false, true} {
			dir := map[bool]string{false: "encrypt", true: "decrypt"}[decrypt]
			b.Run(name+"/"+dir, func(b *testing.B) {
				p := Params{Cipher: c, Key: make([]byte, c.KeySize), IV: make([]byte, c.IVSize), NoPad: true}
				measure(b, size, func() {
					src := io.LimitReader(zeroReader{}, size)
					var op *Operation
					var err error
					if decrypt {
						op, err = NewDecryption(context.Background(), p, io.Discard, src)
					} else {
						op, err = NewEncryption(context.Background(), p, io.Discard, src)
					}
					if err == nil {
						err = op.Run(context.Background())
					}
					if err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

func measure(b *testing.B, size int, f func()) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	f()
	cpu0 := cputime.ProcessSeconds()
	b.ResetTimer()
	for b.Loop() {
		f()
	}
	b.StopTimer()
	if cpu := cputime.ProcessSeconds() - cpu0; cpu > 0 && cpu0 > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/cpu/1e6, "cpu-MB/s")
	}
}
