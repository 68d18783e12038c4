package tcrypt

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/volume"
)

// BenchmarkOpenWithoutHints opens VeraCrypt volumes with no --hash and
// with the right one, and reports the time against the goals: without a
// hint, at most 1.2 x the sum of the single-PRF VeraCrypt derivations
// divided by the number of cores (x-sum/cores); with the right hint, at
// most 1.05 x one derivation of that PRF (x-own-prf).
//
//	go test -run XXX -bench OpenWithoutHints ./volume/tcrypt
func BenchmarkOpenWithoutHints(b *testing.B) {
	prfTime := map[string]time.Duration{}
	var sum time.Duration
	for _, k := range selectKDFs("", true, false, false, 0) {
		start := time.Now()
		if _, err := kdf.Derive(context.Background(), k.params(), []byte("password"), make([]byte, 64), headerKeySize); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		prfTime[k.PRF] = d
		sum += d
	}
	bound := sum / time.Duration(runtime.GOMAXPROCS(0))
	for _, tc := range []struct{ image, prf, hint string }{
		{"vc_1-sha512-xts-aes", "SHA-512", ""},
		{"vc_1-whirlpool-xts-aes", "Whirlpool", ""},
		{"vc_1-sha512-xts-aes", "SHA-512", "SHA-512"},
		{"vc_1-whirlpool-xts-aes", "Whirlpool", "Whirlpool"},
	} {
		name := tc.image
		if tc.hint != "" {
			name += "/hash=" + tc.hint
		}
		b.Run(name, func(b *testing.B) {
			im := imageByName(b, tc.image)
			var total time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				v, err := volume.OpenWith(context.Background(), im.Path, volume.Credentials{Password: []byte(im.Password)}, volume.Options{ReadOnly: true, Hash: tc.hint})
				if err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
				v.Close()
			}
			avg := total / time.Duration(b.N)
			b.ReportMetric(avg.Seconds(), "open-s")
			b.ReportMetric(float64(avg)/float64(bound), "x-sum/cores")
			b.ReportMetric(float64(avg)/float64(prfTime[tc.prf]), "x-own-prf")
		})
	}
}
