package lanes

import (
	"runtime"
	"testing"

	"github.com/cryptvol/cryptvol/internal/cputime"
)

// BenchmarkKernels times each kernel this CPU has on a full group: ns/op
// is one iteration of the whole group (two compressions per lane);
// cpu-ns/op the same in CPU time of the thread, and chain-iter/cpu-s
// counts iterations of single chains per CPU-second.
func BenchmarkKernels(b *testing.B) {
	for _, h := range allHashes {
		for _, k := range Available(h) {
			b.Run(h.String()+"/"+k.Name, func(b *testing.B) {
				var s State
				ipad, opad := pads(h, []byte("password"))
				for l := 0; l < k.Lanes; l++ {
					s.SetKey(h, l, ipad, opad)
				}
				const chunk = 256
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ResetTimer()
				cpu0 := cputime.ThreadSeconds()
				for done := 0; done < b.N; done += chunk {
					k.Run(&s, 0, min(chunk, b.N-done))
				}
				if cpu := cputime.ThreadSeconds() - cpu0; cpu > 0 {
					b.ReportMetric(cpu*1e9/float64(b.N), "cpu-ns/op")
					b.ReportMetric(float64(k.Lanes)*float64(b.N)/cpu, "chain-iter/cpu-s")
				}
			})
		}
	}
}
