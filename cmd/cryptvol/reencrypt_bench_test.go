//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkReencryptVsExport measures `cryptvol reencrypt` (a new key,
// the same cipher) against `cryptvol export` of the same volume to a file
// beside it, in the same run, alternating, best of rounds: the ratio is
// the cost of a re-encryption in exports. Both are the real command, so
// both include starting the process and the (cheap) key derivation.
// CRYPTVOL_REENCRYPT_BENCH_MIB sets the data size (default 64),
// CRYPTVOL_REENCRYPT_BENCH_ROUNDS the rounds (default 5).
//
//	go test ./cmd/cryptvol -run '^$' -bench ReencryptVsExport -benchtime 1x
func BenchmarkReencryptVsExport(b *testing.B) {
	if _, err := exec.LookPath("cryptvol"); err != nil {
		b.Skip("skipping: the cryptvol test command is not on PATH")
	}
	size := int64(envInt("CRYPTVOL_REENCRYPT_BENCH_MIB", 64)) << 20
	rounds := envInt("CRYPTVOL_REENCRYPT_BENCH_ROUNDS", 5)
	for _, f := range []reencFormat{reencFormats[0], reencFormats[3]} {
		b.Run(f.name, func(b *testing.B) {
			vol, creds, _, _ := reencVolume(b, f, size)
			out := filepath.Join(filepath.Dir(vol), "export.img")
			timeOf := func(args ...string) time.Duration {
				start := time.Now()
				cryptvolCmd(b, nil, append(args, creds...)...)
				return time.Since(start)
			}
			best := func(d, old time.Duration) time.Duration {
				if old == 0 || d < old {
					return d
				}
				return old
			}
			for i := 0; i < b.N; i++ {
				var re, ex time.Duration
				for r := 0; r < rounds; r++ {
					ex = best(timeOf("export", vol, out, "--force"), ex)
					// The removed export's blocks are freed in the
					// filesystem's next journal commit, which the
					// re-encryption's first sync would otherwise pay
					// for: it is made here, outside both timings.
					os.Remove(out)
					syscall.Sync()
					re = best(timeOf("reencrypt", vol), re)
				}
				mb := float64(size) / 1e6
				b.ReportMetric(float64(re)/float64(ex), "reencrypt/export")
				b.ReportMetric(mb/re.Seconds(), "reencrypt-MB/s")
				b.ReportMetric(mb/ex.Seconds(), "export-MB/s")
			}
		})
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
