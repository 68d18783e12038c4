package kdf

import (
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/internal/cputime"
)

// BenchmarkPBKDF2VsOpenSSL derives a VeraCrypt header key (192 bytes) with
// PBKDF2-HMAC-SHA-512, -SHA-256, -BLAKE2s-256, -RIPEMD-160 and -Whirlpool
// (OpenSSL's legacy provider) here and with `openssl kdf ... PBKDF2`
// alternately, b.N times each, both on one core (PBKDF2 limited to one
// goroutine; openssl is single-threaded), and reports the best CPU time of
// each (openssl's less its start-up, the best of three runs at one
// iteration) and openssl/cryptvol, the speed-up. Run it with a fixed
// count, e.g. -bench VsOpenSSL -benchtime 5x; bench_vs_openssl.sh runs it
// with CPU features masked on both sides.
func BenchmarkPBKDF2VsOpenSSL(b *testing.B) {
	if _, err := exec.LookPath("openssl"); err != nil {
		b.Skip("openssl not installed (Debian package openssl)")
	}
	saved := maxParallel
	maxParallel = func() int { return 1 }
	defer func() { maxParallel = saved }()
	pw, salt := "aaaaaaaaaaaa", strings.Repeat("5a", 64)
	openssl := func(digest string, iter int) float64 {
		args := []string{"kdf"}
		if digest == "whirlpool" {
			args = append(args, "-provider", "legacy", "-provider", "default")
		}
		args = append(args, "-keylen", "192", "-kdfopt", "digest:"+digest,
			"-kdfopt", "pass:"+pw, "-kdfopt", "hexsalt:"+salt, "-kdfopt", fmt.Sprint("iter:", iter), "PBKDF2")
		cmd := exec.Command("openssl", args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("openssl kdf: %v\n%s", err, out)
		}
		return (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	for _, prf := range []string{hashes.SHA512, hashes.SHA256, hashes.BLAKE2s256, hashes.RIPEMD160, hashes.Whirlpool} {
		digest := opensslDigest(prf)
		spec := hashes.MustLookup(prf)
		iters := []int{500000, 50000}
		if prf == hashes.RIPEMD160 {
			iters = []int{655331, 65533} // VeraCrypt 1.25's default, and a tenth
		}
		for _, iter := range iters {
			b.Run(fmt.Sprintf("%s/%d", prf, iter), func(b *testing.B) {
				startup := math.Inf(1)
				for range 3 {
					startup = min(startup, openssl(digest, 1))
				}
				saltBytes := []byte(strings.Repeat("Z", 64))
				ours, theirs := math.Inf(1), math.Inf(1)
				for range b.N {
					theirs = min(theirs, openssl(digest, iter)-startup)
					c0 := cputime.ProcessSeconds()
					PBKDF2(spec, []byte(pw), saltBytes, iter, 192)
					ours = min(ours, cputime.ProcessSeconds()-c0)
				}
				b.ReportMetric(ours, "cryptvol-cpu-s")
				b.ReportMetric(theirs, "openssl-cpu-s")
				b.ReportMetric(theirs/ours, "x-openssl")
				chains := float64((192 + spec.Size - 1) / spec.Size)
				b.ReportMetric(ours*1e9/float64(iter)/chains, "cryptvol-ns/iter")
				b.ReportMetric(theirs*1e9/float64(iter)/chains, "openssl-ns/iter")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// opensslDigest is OpenSSL's name of a PRF of the hashes registry.
func opensslDigest(prf string) string {
	switch prf {
	case hashes.BLAKE2s256:
		return "BLAKE2S-256"
	case hashes.Whirlpool:
		return "whirlpool"
	}
	return strings.ReplaceAll(prf, "-", "")
}
