package bench

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/ciphers"
)

// quick keeps the unit tests fast: the figures are only checked for being
// sane, never for being fast (no test asserts wall time).
const quick = 2 * time.Millisecond

// TestCiphersAllChains: every VeraCrypt chain in XTS (512-byte units),
// then the two Adiantum rows (4096-byte sectors).
func TestCiphersAllChains(t *testing.T) {
	var calls []int
	rs, err := Ciphers(context.Background(), Options{
		Buffer: 8192, Threads: 1, MinTime: quick,
		Progress: func(done, total int) {
			if total != 17 {
				t.Errorf("progress total %d, want 17", total)
			}
			calls = append(calls, done)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 17 {
		t.Fatalf("%d results, want one per VeraCrypt chain (15) and two Adiantum rows", len(rs))
	}
	if len(calls) != 18 || calls[0] != 0 || calls[17] != 17 {
		t.Errorf("progress calls %v, want 0..17", calls)
	}
	seen := map[string]bool{}
	for i, r := range rs {
		seen[r.Name] = true
		wantMode, wantSS := "xts", 512
		if r.Name == "Adiantum-XChaCha12" || r.Name == "Adiantum-XChaCha20" {
			wantMode, wantSS = "adiantum", 4096
		}
		if r.Mode != wantMode || r.SectorSize != wantSS {
			t.Errorf("%s: mode %q, %d-byte sectors; want %s, %d", r.Name, r.Mode, r.SectorSize, wantMode, wantSS)
		}
		if r.EncryptBPS <= 0 || r.DecryptBPS <= 0 || r.MeanBPS <= 0 {
			t.Errorf("%s: non-positive speed %+v", r.Name, r)
		}
		if lo, hi := min(r.EncryptBPS, r.DecryptBPS), max(r.EncryptBPS, r.DecryptBPS); r.MeanBPS < lo || r.MeanBPS > hi {
			t.Errorf("%s: mean %d outside [%d, %d]", r.Name, r.MeanBPS, lo, hi)
		}
		if i > 0 && rs[i-1].MeanBPS < r.MeanBPS {
			t.Errorf("not sorted by mean: %s (%d) before %s (%d)", rs[i-1].Name, rs[i-1].MeanBPS, r.Name, r.MeanBPS)
		}
	}
	for _, c := range ciphers.Chains() {
		if !seen[c.Name] {
			t.Errorf("no result for %s", c.Name)
		}
	}
	if !seen["Adiantum-XChaCha12"] || !seen["Adiantum-XChaCha20"] {
		t.Error("no Adiantum rows")
	}
}

// TestCiphersAdiantumFilter: "adiantum" selects both rows, a variant one;
// a buffer that is no multiple of 4096 gets 512-byte sectors.
func TestCiphersAdiantumFilter(t *testing.T) {
	for _, tc := range []struct {
		names []string
		buf   int
		want  []string
		ss    int
	}{
		{[]string{"adiantum"}, 4096, []string{"Adiantum-XChaCha12", "Adiantum-XChaCha20"}, 4096},
		{[]string{"ADIANTUM-xchacha20", "aes"}, 1536, []string{"Adiantum-XChaCha20", "AES"}, 512},
		{[]string{"Adiantum", "adiantum-xchacha12"}, 1 << 20, []string{"Adiantum-XChaCha12", "Adiantum-XChaCha20"}, 4096},
	} {
		rs, err := Ciphers(context.Background(), Options{Buffer: tc.buf, Threads: 2, MinTime: quick, Algorithms: tc.names})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]CipherResult{}
		for _, r := range rs {
			got[r.Name] = r
		}
		if len(rs) != len(tc.want) {
			t.Fatalf("%v: %d results, want %v", tc.names, len(rs), tc.want)
		}
		for _, n := range tc.want {
			r, ok := got[n]
			if !ok {
				t.Fatalf("%v: no %s row", tc.names, n)
			}
			if r.Mode == "adiantum" && r.SectorSize != tc.ss {
				t.Errorf("%v, %d-byte buffer: %s with %d-byte sectors, want %d", tc.names, tc.buf, n, r.SectorSize, tc.ss)
			}
			if r.MeanBPS <= 0 {
				t.Errorf("%s: %+v", n, r)
			}
		}
	}
}

// TestCiphersParallel runs a buffer large enough for sector.Parallel to
// split it, with a filter.
func TestCiphersParallel(t *testing.T) {
	rs, err := Ciphers(context.Background(), Options{
		Buffer: 256 << 10, Threads: 2, MinTime: quick,
		Algorithms: []string{"aes", "Serpent-Twofish-AES", "AES"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("got %d results for two distinct names: %+v", len(rs), rs)
	}
	for _, r := range rs {
		if r.Name != "AES" && r.Name != "Serpent-Twofish-AES" {
			t.Errorf("unexpected result %q", r.Name)
		}
	}
}

func TestCiphersRejects(t *testing.T) {
	for _, o := range []Options{
		{Buffer: 1000},
		{Buffer: 256},
		{Buffer: -512},
		{Threads: -1},
		{Algorithms: []string{"Rot13"}},
		{Algorithms: []string{"Blowfish"}}, // legacy 64-bit block: no XTS
		{Algorithms: []string{"AES-Blowfish-Serpent"}},
	} {
		o.MinTime = quick
		if _, err := Ciphers(context.Background(), o); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%+v: err = %v, want ErrInvalidOption", o, err)
		}
	}
}

func TestCiphersCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Ciphers(ctx, Options{Buffer: 4096, MinTime: time.Second}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestKDFAllPRFs(t *testing.T) {
	rs, err := KDF(context.Background(), Options{MinTime: quick, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"SHA-512", "Whirlpool", "SHA-256", "BLAKE2s-256", "Streebog", "RIPEMD-160", "Argon2id", "SHA-1"}
	if len(rs) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(rs), len(want), rs)
	}
	// VeraCrypt's published defaults (PIM 0), and TrueCrypt's for SHA-1.
	iters := map[string]int{"SHA-512": 500000, "Whirlpool": 500000, "SHA-256": 500000, "BLAKE2s-256": 500000,
		"Streebog": 500000, "RIPEMD-160": 655331, "Argon2id": 6, "SHA-1": 2000}
	blocks := map[string]int{"SHA-512": 3, "Whirlpool": 3, "SHA-256": 6, "BLAKE2s-256": 6, "Streebog": 3, "RIPEMD-160": 10, "SHA-1": 10}
	for i, r := range rs {
		if r.PRF != want[i] {
			t.Errorf("result %d is %q, want %q", i, r.PRF, want[i])
		}
		if !(r.IterationsPerSecond > 0) || !(r.HeaderSeconds > 0) || math.IsInf(r.HeaderSeconds, 0) {
			t.Errorf("%s: non-positive figures %+v", r.PRF, r)
		}
		if r.HeaderIterations != iters[r.PRF] {
			t.Errorf("%s: header iterations %d, want %d", r.PRF, r.HeaderIterations, iters[r.PRF])
		}
		switch r.PRF {
		case "Argon2id":
			if r.KDF != "argon2id" || r.HeaderMemoryKiB != 416<<10 || r.HeaderMethod != MethodScaled {
				t.Errorf("Argon2id: %+v", r)
			}
		case "SHA-1":
			if r.Format != "truecrypt" {
				t.Errorf("SHA-1 format %q, want truecrypt", r.Format)
			}
		default:
			if r.KDF != "pbkdf2" || r.Format != "veracrypt" || r.HeaderBlocks != blocks[r.PRF] || r.HeaderMethod != MethodEstimated {
				t.Errorf("%s: %+v", r.PRF, r)
			}
			// The estimate is the documented formula: two cores share
			// the blocks, so each computes ceil(blocks/2) of them.
			perCore := (blocks[r.PRF] + 1) / 2
			if est := float64(r.HeaderIterations) * float64(perCore) / r.IterationsPerSecond; math.Abs(est-r.HeaderSeconds) > 1e-9*est {
				t.Errorf("%s: header time %g, formula gives %g", r.PRF, r.HeaderSeconds, est)
			}
		}
	}
}

func TestKDFPIMAndFilter(t *testing.T) {
	rs, err := KDF(context.Background(), Options{MinTime: quick, PIM: 1, Algorithms: []string{"sha512", "argon2id", "ripemd160"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("got %+v", rs)
	}
	// VeraCrypt: PIM p > 0 gives 15000 + 1000 p iterations; Argon2id PIM 1
	// is 64 MiB and 3 passes.
	if rs[0].PRF != "SHA-512" || rs[0].HeaderIterations != 16000 || rs[0].PIM != 1 {
		t.Errorf("SHA-512 PIM 1: %+v", rs[0])
	}
	if rs[1].PRF != "RIPEMD-160" || rs[1].HeaderIterations != 16000 {
		t.Errorf("RIPEMD-160 PIM 1: %+v", rs[1])
	}
	if rs[2].PRF != "Argon2id" || rs[2].HeaderIterations != 3 || rs[2].HeaderMemoryKiB != 64<<10 {
		t.Errorf("Argon2id PIM 1: %+v", rs[2])
	}
	for _, bad := range [][]string{{"MD5"}, {"SHA-384"}, {"nope"}} {
		if _, err := KDF(context.Background(), Options{MinTime: quick, Algorithms: bad}); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%v: err = %v, want ErrInvalidOption", bad, err)
		}
	}
}

// TestArgon2Full times one complete derivation at PIM 1 (64 MiB, 3
// passes), the smallest VeraCrypt cost.
func TestArgon2Full(t *testing.T) {
	rs, err := KDF(context.Background(), Options{PIM: 1, Argon2Full: true, Algorithms: []string{"Argon2id"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].HeaderMethod != MethodMeasured || !(rs[0].HeaderSeconds > 0) || !(rs[0].IterationsPerSecond > 0) {
		t.Errorf("got %+v", rs)
	}
}

// TestReportJSON checks the field names docs/ARCHITECTURE.md documents
// ("Command-line contract"), by decoding the encoded report into generic
// maps.
func TestReportJSON(t *testing.T) {
	o := Options{Buffer: 4096, Threads: 1, MinTime: quick, Algorithms: []string{"AES"}}
	r := NewReport(o)
	var err error
	if r.Ciphers, err = Ciphers(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	ko := Options{MinTime: quick, Algorithms: []string{"SHA-256"}}
	if r.KDF, err = KDF(context.Background(), ko); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, kind := range map[string]string{"cpu": "string", "aes_hw": "bool", "buffer": "number", "threads": "number",
		"goos": "string", "goarch": "string", "features": "array", "ciphers": "array", "kdf": "array"} {
		if got := jsonKind(m[k]); got != kind {
			t.Errorf("%q is %s, want %s", k, got, kind)
		}
	}
	if m["buffer"] != 4096.0 || m["threads"] != 1.0 {
		t.Errorf("buffer %v threads %v, want 4096 and 1", m["buffer"], m["threads"])
	}
	c := m["ciphers"].([]any)[0].(map[string]any)
	for _, k := range []string{"encrypt_bps", "decrypt_bps", "mean_bps"} {
		if v, ok := c[k].(float64); !ok || v <= 0 {
			t.Errorf("ciphers[0].%s = %v", k, c[k])
		}
	}
	if c["name"] != "AES" || c["mode"] != "xts" {
		t.Errorf("ciphers[0] = %v", c)
	}
	k := m["kdf"].([]any)[0].(map[string]any)
	if v, ok := k["iterations_per_second"].(float64); !ok || v <= 0 || k["prf"] != "SHA-256" {
		t.Errorf("kdf[0] = %v", k)
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case float64:
		return "number"
	case []any:
		return "array"
	case nil:
		return "missing"
	}
	return "other"
}

// measure times one op as the benchmarks time many (measureAll).
func measure(ctx context.Context, minTime time.Duration, op func() error) (Spread, error) {
	s, err := measureAll(ctx, minTime, []timedOp{{run: op}}, sampleHooks{})
	if err != nil {
		return Spread{}, err
	}
	return s[0], nil
}

// TestMeasureSamples checks the timing loop with a fake op: the count of
// calls must cover the warm-up and at least one sample, and the result is
// the per-call time of the samples with their range.
func TestMeasureSamples(t *testing.T) {
	calls := 0
	per, err := measure(context.Background(), 5*time.Millisecond, func() error {
		calls++
		time.Sleep(100 * time.Microsecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 2 || per.N < 1 {
		t.Errorf("%d calls, %d samples", calls, per.N)
	}
	if per.Min < 100e-6 {
		t.Errorf("per-call time %v below the op's own sleep", per.Min)
	}
	if !(per.Min <= per.Median && per.Median <= per.Max) {
		t.Errorf("median %v outside its range [%v, %v]", per.Median, per.Min, per.Max)
	}
	boom := errors.New("boom")
	if _, err := measure(context.Background(), time.Millisecond, func() error { return boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
}

// TestSpreadOf checks the median and range of known samples.
func TestSpreadOf(t *testing.T) {
	for _, c := range []struct {
		in            []float64
		med, min, max float64
	}{
		{[]float64{3, 1, 2}, 2, 1, 3},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4},
		{[]float64{7}, 7, 7, 7},
	} {
		s := spreadOf(c.in)
		if s.Median != c.med || s.Min != c.min || s.Max != c.max || s.N != len(c.in) {
			t.Errorf("spreadOf(%v) = %+v, want median %v in [%v, %v]", c.in, s, c.med, c.min, c.max)
		}
	}
	if r := (Spread{Median: 2, Min: 1.9, Max: 2.3}).Rel(); r < 0.19 || r > 0.21 {
		t.Errorf("Rel = %v, want 0.2", r)
	}
}

// TestFinishWarnsOfSpread: a figure whose samples spread over more than
// 10% of its median gets a warning naming it; a tight one none.
func TestFinishWarnsOfSpread(t *testing.T) {
	r := Report{Cores: 2, LoadAverage: 0}
	r.Ciphers = []CipherResult{
		{Name: "Camellia", MedianBPS: 200, MinBPS: 100, MaxBPS: 250},
		{Name: "AES", MedianBPS: 1000, MinBPS: 990, MaxBPS: 1010},
	}
	r.KDF = []KDFResult{{PRF: "Whirlpool", HeaderSeconds: 1, MinHeaderSeconds: 0.8, MaxHeaderSeconds: 1.5}}
	r.Finish()
	joined := strings.Join(r.Warnings, "\n")
	if !strings.Contains(joined, "Camellia varied by 75%") || !strings.Contains(joined, "Whirlpool varied by 70%") || strings.Contains(joined, "AES") {
		t.Errorf("warnings:\n%s", joined)
	}
	r = Report{Cores: 2, LoadAverage: 3.5}
	r.Finish()
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "busy") {
		t.Errorf("busy machine: warnings %q", r.Warnings)
	}
}

// TestMeasureSlowOpKeepsSamples: an op slower than the whole measuring
// time still gets minSamples samples (a range from one sample would be
// zero: a false claim of precision), within the maxTimeFactor bound.
func TestMeasureSlowOpKeepsSamples(t *testing.T) {
	calls := 0
	// Scaled so that scheduling delays on a loaded machine (a sleep
	// overshooting by a few ms) cannot eat the 10x budget: 33 calls fit.
	per, err := measure(context.Background(), 20*time.Millisecond, func() error {
		calls++
		time.Sleep(6 * time.Millisecond) // a third of minTime: 20 ms / 7 samples is less
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if per.N < minSamples {
		t.Errorf("%d samples of a slow op (%d calls), want at least %d", per.N, calls, minSamples)
	}
	// An op far slower than maxTimeFactor × minTime stops at one sample.
	calls = 0
	per, err = measure(context.Background(), 100*time.Microsecond, func() error {
		calls++
		time.Sleep(2 * time.Millisecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if per.N != 1 || calls != 2 {
		t.Errorf("%d samples, %d calls of an op 20x the measuring time; want 1 sample after the warm-up", per.N, calls)
	}
}

// TestMeasureAllInterleaves: after each op's warm-up and sizing, the
// samples go round the ops, one each per round, so that every op's range
// spans the whole run; progress counts every sample up to the total.
func TestMeasureAllInterleaves(t *testing.T) {
	var order []string
	var last, total int
	op := func() error { time.Sleep(20 * time.Microsecond); return nil }
	// 30 ms, not quick: a sleep that overshoots 50-fold on a loaded
	// machine must not use up the budget (30 × 30 ms) that ends an op's
	// rounds early.
	ss, err := measureAll(context.Background(), 30*time.Millisecond, []timedOp{{"a", op}, {"b", op}}, sampleHooks{
		trying:   func(name string) { order = append(order, name) },
		progress: func(done, n int) { last, total = done, n },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a", "b"} // the warm-ups
	for range samplesPerRun {
		want = append(want, "a", "b")
	}
	if strings.Join(order, "") != strings.Join(want, "") {
		t.Errorf("order of the tries %q, want %q", strings.Join(order, ""), strings.Join(want, ""))
	}
	if last != total || total != 2*samplesPerRun {
		t.Errorf("progress ended at %d of %d, want %d of %d", last, total, 2*samplesPerRun, 2*samplesPerRun)
	}
	for i, s := range ss {
		if s.N != samplesPerRun || !(s.Min <= s.Median && s.Median <= s.Max) || s.Min < 20e-6 {
			t.Errorf("op %d: %+v", i, s)
		}
	}
}
