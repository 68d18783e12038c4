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
// The expected sub-benchmark is the view the search is ordered for: the
// time to the right key of a volume of each PRF (and a hidden one, and a
// wrong password), without hints, and their mean weighted by how likely
// each is (expectedWeights) — the expected time a user waits.
//
//	go test -run XXX -bench OpenWithoutHints ./volume/tcrypt
//	go test -run XXX -bench OpenWithoutHints/expected -benchtime 1x ./volume/tcrypt
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
	b.Run("expected", func(b *testing.B) { benchExpected(b, bound) })
}

// expectedWeights are guesses at how likely each kind of VeraCrypt volume
// is, for the expected-time view: the default PRF for most, a hidden
// volume now and then, the other PRFs rarely. They sum to 1.
var expectedWeights = []struct {
	image, password string
	weight          float64
}{
	{"vc_1-sha512-xts-aes", "", 0.72},
	{"vc_1-sha512-xts-aes-hidden", pwHidden, 0.08},
	{"vc_1-sha256-xts-aes", "", 0.05},
	{"vc_1-blake2s-xts-aes", "", 0.02},
	{"vc_1-whirlpool-xts-aes", "", 0.04},
	{"vc_1-stribog512-xts-camellia", "", 0.02},
	{"vc_1-argon2id-xts-aes", "", 0.03},
	{"vc_1-ripemd160-xts-aes", "", 0.04},
}

// benchExpected opens each volume of expectedWeights once per iteration
// without hints and reports each time to the key (s-IMAGE), the weighted
// mean (expected-s, and x-sum/cores against the same bound as above),
// and a wrong password's time, which tries everything (wrong-s).
func benchExpected(b *testing.B, bound time.Duration) {
	times := make([]time.Duration, len(expectedWeights))
	var wrong time.Duration
	for i := 0; i < b.N; i++ {
		for k, w := range expectedWeights {
			im := imageByName(b, w.image)
			pw := im.Password
			if w.password != "" {
				pw = w.password
			}
			start := time.Now()
			v, err := volume.OpenWith(context.Background(), im.Path, volume.Credentials{Password: []byte(pw)}, volume.Options{ReadOnly: true})
			if err != nil {
				b.Fatalf("%s: %v", w.image, err)
			}
			times[k] += time.Since(start)
			v.Close()
		}
		im := imageByName(b, "vc_1-sha512-xts-aes")
		start := time.Now()
		if _, err := volume.OpenWith(context.Background(), im.Path, volume.Credentials{Password: []byte("wrong")}, volume.Options{ReadOnly: true}); err == nil {
			b.Fatal("opened with a wrong password")
		}
		wrong += time.Since(start)
	}
	var expected float64
	for k, w := range expectedWeights {
		s := times[k].Seconds() / float64(b.N)
		expected += w.weight * s
		b.ReportMetric(s, "s-"+w.image)
	}
	b.ReportMetric(expected, "expected-s")
	b.ReportMetric(expected/bound.Seconds(), "x-sum/cores")
	b.ReportMetric(wrong.Seconds()/float64(b.N), "wrong-s")
}
