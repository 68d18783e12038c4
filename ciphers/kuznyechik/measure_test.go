package kuznyechik

import (
	"testing"

	"github.com/cryptvol/cryptvol/internal/cputime"
)

// measure runs f in a b.Loop over a buffer of the given size and reports,
// besides MB/s (wall time), cpuMB/s: bytes per second of process CPU time.
// openssl speed also divides by CPU time, and on a shared machine wall time
// mostly measures the neighbours.
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
