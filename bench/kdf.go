package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/kdf/argon2"
)

// headerKeySize is the number of key bytes a TrueCrypt/VeraCrypt header
// derivation produces (the header key and the XTS secondary key of the
// longest cascade).
const headerKeySize = 192

// pbkdf2ParallelFrom mirrors kdf.PBKDF2: from this iteration count on, the
// output blocks of one derivation run on separate cores.
const pbkdf2ParallelFrom = 4096

// argon2ReducedKiB is the memory of the reduced Argon2id runs whose times
// are scaled up to VeraCrypt's cost: many times the last-level cache of
// desktop CPUs, as the real derivation is, yet well below the real 416 MiB
// to 1 GiB. (On a 32 MiB-L3 CPU, 64 MiB runs came out a third faster per
// MiB than the full derivation; 256 MiB runs agreed within the noise.) A
// machine that cannot spare it gets halves, down to argon2MinReducedKiB.
const (
	argon2ReducedKiB    = 256 << 10
	argon2MinReducedKiB = 16 << 10
)

// How KDFResult.HeaderMethod says the header time was obtained.
const (
	// MethodEstimated: header iterations x output blocks per core divided
	// by the measured iterations per second.
	MethodEstimated = "estimated"
	// MethodScaled: Argon2id runs of one and two passes over reduced
	// memory (KDFResult.ScaledFromKiB) were timed, and the first-pass
	// time plus the later-pass time (their difference) times the
	// remaining passes scaled by the ratio of memory.
	MethodScaled = "scaled"
	// MethodMeasured: one full derivation was timed.
	MethodMeasured = "measured"
)

// KDFResult is the speed of one key-derivation function and what it means
// for a volume header.
type KDFResult struct {
	// PRF is the hash of PBKDF2-HMAC ("SHA-512", "Whirlpool", ...) or
	// "Argon2id".
	PRF string `json:"prf"`
	// KDF is "pbkdf2" or "argon2id".
	KDF string `json:"kdf"`
	// IterationsPerSecond is, for PBKDF2, HMAC iterations per second on one
	// core computing one output block (the unit of the iteration counts
	// volumes store). For Argon2id it is passes per second over the header
	// derivation's memory (HeaderMemoryKiB), one lane.
	// A float, since Argon2id manages only a few passes per second; PBKDF2
	// rates are whole numbers.
	IterationsPerSecond float64 `json:"iterations_per_second"`
	// Format is the program whose header rule the Header fields follow:
	// "veracrypt", or "truecrypt" for SHA-1, which VeraCrypt never used.
	Format string `json:"format"`
	// PIM is the VeraCrypt PIM of the header figures (0 = default).
	PIM int `json:"pim"`
	// HeaderIterations is the PBKDF2 iteration count (Argon2id: passes) of
	// one header derivation with that PIM.
	HeaderIterations int `json:"header_iterations"`
	// HeaderBlocks is the number of PBKDF2 output blocks of the 192-byte
	// header key (each costs HeaderIterations); 0 for Argon2id.
	HeaderBlocks int `json:"header_blocks,omitempty"`
	// HeaderMemoryKiB is Argon2id's memory; 0 for PBKDF2.
	HeaderMemoryKiB int `json:"header_memory_kib,omitempty"`
	// HeaderSeconds is the time of one header derivation with this PRF on
	// Threads cores, obtained as HeaderMethod says.
	HeaderSeconds float64 `json:"header_seconds"`
	// HeaderMethod is MethodEstimated, MethodScaled or MethodMeasured.
	HeaderMethod string `json:"header_method"`
	// ScaledFromKiB is the memory of the reduced Argon2id runs a scaled
	// header time comes from.
	ScaledFromKiB int `json:"scaled_from_kib,omitempty"`
	// IterationsPerSecond and HeaderSeconds are medians over the run's
	// samples; these are their ranges (equal for a single measured
	// derivation), and Samples is how many there were.
	MinIterationsPerSecond float64 `json:"min_iterations_per_second"`
	MaxIterationsPerSecond float64 `json:"max_iterations_per_second"`
	MinHeaderSeconds       float64 `json:"min_header_seconds"`
	MaxHeaderSeconds       float64 `json:"max_header_seconds"`
	Samples                int     `json:"samples"`
}

// Spread is the header time's range relative to its median.
func (r KDFResult) Spread() float64 {
	if r.HeaderSeconds <= 0 {
		return 0
	}
	return (r.MaxHeaderSeconds - r.MinHeaderSeconds) / r.HeaderSeconds
}

// KDF measures PBKDF2 iterations per second, one core, for every PRF of
// VeraCrypt and TrueCrypt (SHA-512, Whirlpool, SHA-256, BLAKE2s-256,
// Streebog, RIPEMD-160, SHA-1) and the time one VeraCrypt header derivation
// with o.PIM takes with each, plus VeraCrypt's Argon2id; o.Algorithms
// restricts the list. The results are in VeraCrypt's PRF order.
//
// A PBKDF2 header time is computed, not timed: header iterations times the
// output blocks each core computes (kdf.PBKDF2 spreads the blocks of a long
// derivation over the cores), divided by the measured rate. The Argon2id
// time is a reduced-memory run scaled up, or with o.Argon2Full one full
// derivation timed.
func KDF(ctx context.Context, o Options) ([]KDFResult, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	prfs, err := selectPRFs(o.Algorithms)
	if err != nil {
		return nil, err
	}
	minTime := o.minTime(DefaultKDFTime)
	o.progress(0, len(prfs))
	// The PBKDF2 rows are sized one by one, then their samples are taken
	// together, interleaved (measureAll), as the ciphers' are; Argon2id,
	// whose runs of hundreds of MiB pair up on their own (timePairs),
	// comes after them.
	var jobs []pbkdf2Job
	argon := false
	for _, name := range prfs {
		if name == kdf.Argon2idPRF {
			argon = true
			continue
		}
		o.trying(name)
		j, err := sizePBKDF2(ctx, name, minTime)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	ops := make([]timedOp, len(jobs))
	for i, j := range jobs {
		ops[i] = timedOp{name: j.h.Name, run: j.run}
	}
	spreads, err := measureAll(ctx, minTime, ops, sampleHooks{trying: o.Trying, progress: inUnitsOf(len(jobs), func(done, _ int) { o.progress(done, len(prfs)) })})
	if err != nil {
		return nil, err
	}
	byName := map[string]KDFResult{}
	for i, j := range jobs {
		r, err := pbkdf2Result(j, spreads[i], o)
		if err != nil {
			return nil, err
		}
		byName[r.PRF] = r
	}
	if argon {
		o.trying(kdf.Argon2idPRF)
		r, err := benchArgon2id(ctx, o, minTime)
		if err != nil {
			return nil, err
		}
		byName[r.PRF] = r
		o.progress(len(prfs), len(prfs))
	}
	out := make([]KDFResult, 0, len(prfs))
	for _, name := range prfs {
		out = append(out, byName[name])
	}
	return out, nil
}

// allPRFs lists VeraCrypt's KDFs in its order, then TrueCrypt's SHA-1.
func allPRFs() []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range append(kdf.VeraCryptPRFs(false), kdf.TrueCryptPRFs()...) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func selectPRFs(names []string) ([]string, error) {
	all := allPRFs()
	if len(names) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		canon := ""
		if strings.EqualFold(strings.TrimSpace(n), kdf.Argon2idPRF) {
			canon = kdf.Argon2idPRF
		} else if h, err := hashes.Lookup(n); err == nil {
			canon = h.Name
		}
		known := false
		for _, a := range all {
			known = known || a == canon
		}
		if !known {
			return nil, fmt.Errorf("%w: %q is not a TrueCrypt/VeraCrypt PRF (known: %s)", ErrInvalidOption, n, strings.Join(all, ", "))
		}
		want[canon] = true
	}
	var out []string
	for _, a := range all {
		if want[a] {
			out = append(out, a)
		}
	}
	return out, nil
}

// pbkdf2Job is one PRF of the KDF benchmark, sized: run derives one
// output block with n iterations.
type pbkdf2Job struct {
	h   hashes.Spec
	n   int
	run func() error
}

// sizePBKDF2 sets up one PRF and sizes its calls.
func sizePBKDF2(ctx context.Context, name string, minTime time.Duration) (pbkdf2Job, error) {
	h, err := hashes.Lookup(name)
	if err != nil {
		return pbkdf2Job{}, err
	}
	pw, salt := []byte("benchmark password"), make([]byte, 64)
	if _, err := rand.Read(salt); err != nil {
		return pbkdf2Job{}, err
	}
	// One call of n iterations derives one output block on one goroutine;
	// n is sized so a call takes about a fiftieth of minTime, which makes
	// the per-call overhead (HMAC key setup) negligible.
	n := 1024
	for {
		t0 := time.Now()
		if _, err := kdf.PBKDF2Context(ctx, h, pw, salt, n, h.Size); err != nil {
			return pbkdf2Job{}, err
		}
		if time.Since(t0) >= minTime/50 || n >= 1<<24 {
			break
		}
		n *= 2
	}
	run := func() error {
		_, err := kdf.PBKDF2Context(ctx, h, pw, salt, n, h.Size)
		return err
	}
	return pbkdf2Job{h: h, n: n, run: run}, nil
}

// pbkdf2Result turns a PRF's time per call into its rate and the header
// figures for o.PIM.
func pbkdf2Result(j pbkdf2Job, per Spread, o Options) (KDFResult, error) {
	h, n := j.h, j.n
	var err error
	rate, lo, hi := rateRange(float64(n), per)
	r := KDFResult{PRF: h.Name, KDF: "pbkdf2", IterationsPerSecond: math.Round(rate), PIM: o.PIM, HeaderMethod: MethodEstimated,
		MinIterationsPerSecond: math.Round(lo), MaxIterationsPerSecond: math.Round(hi), Samples: per.N}
	var p kdf.Params
	if p, err = kdf.VeraCryptParams(h.Name, o.PIM, false); err == nil {
		r.Format = "veracrypt"
	} else if p, err = kdf.TrueCryptParams(h.Name, false); err == nil {
		r.Format, r.PIM = "truecrypt", 0
	} else {
		return KDFResult{}, err
	}
	r.HeaderIterations = int(p.Iterations)
	r.HeaderBlocks = (headerKeySize + h.Size - 1) / h.Size
	cores := 1
	if r.HeaderIterations >= pbkdf2ParallelFrom {
		cores = min(r.HeaderBlocks, o.threads())
	}
	perCore := (r.HeaderBlocks + cores - 1) / cores
	work := float64(r.HeaderIterations) * float64(perCore)
	r.HeaderSeconds = work / r.IterationsPerSecond
	r.MinHeaderSeconds, r.MaxHeaderSeconds = work/r.MaxIterationsPerSecond, work/r.MinIterationsPerSecond
	return r, nil
}

// benchArgon2id times VeraCrypt's Argon2id header derivation for o.PIM.
func benchArgon2id(ctx context.Context, o Options, minTime time.Duration) (KDFResult, error) {
	full, err := kdf.VeraCryptParams(kdf.Argon2idPRF, o.PIM, false)
	if err != nil {
		return KDFResult{}, err
	}
	r := KDFResult{
		PRF: kdf.Argon2idPRF, KDF: "argon2id", Format: "veracrypt", PIM: o.PIM,
		HeaderIterations: int(full.Iterations), HeaderMemoryKiB: int(full.MemoryKiB),
	}
	pw, salt := []byte("benchmark password"), make([]byte, 64)
	if _, err := rand.Read(salt); err != nil {
		return KDFResult{}, err
	}
	op := func(p kdf.Params) error {
		_, err := kdf.Derive(ctx, p, pw, salt, headerKeySize)
		return err
	}
	if o.Argon2Full {
		// One derivation of seconds and hundreds of MiB: no warm-up, no
		// repeats.
		r.HeaderMethod = MethodMeasured
		t0 := time.Now()
		if err := op(full); err != nil {
			return KDFResult{}, fmt.Errorf("full Argon2id derivation (%d MiB): %w", full.MemoryKiB>>10, err)
		}
		r.HeaderSeconds = time.Since(t0).Seconds()
		r.MinHeaderSeconds, r.MaxHeaderSeconds, r.Samples = r.HeaderSeconds, r.HeaderSeconds, 1
	} else {
		r.HeaderMethod = MethodScaled
		var t1, t2 []time.Duration
		one := full
		one.Iterations = 1
		for one.MemoryKiB = min(full.MemoryKiB, argon2ReducedKiB); ; one.MemoryKiB /= 2 {
			two := one
			two.Iterations = 2
			t1, t2, err = timePairs(ctx, minTime, func() error { return op(one) }, func() error { return op(two) })
			if !errors.Is(err, argon2.ErrInsufficientMemory) || one.MemoryKiB <= argon2MinReducedKiB {
				break
			}
		}
		if err != nil {
			return KDFResult{}, err
		}
		r.ScaledFromKiB = int(one.MemoryKiB)
		// The first pass costs more than the others in some ways (fresh
		// pages) and less in others (it only references the blocks
		// filled so far, mostly recent ones, so the caches help), so
		// time the later passes apart: t2 - t1. A busy machine can make
		// that difference meaningless; it is kept to at least half a
		// first pass. Both parts scale with the memory.
		// Each pair of neighbouring runs, which saw about the same load,
		// gives one estimate; the figure is their median.
		scale := float64(full.MemoryKiB) / float64(one.MemoryKiB)
		est := make([]float64, len(t1))
		for i := range t1 {
			later := max(t2[i]-t1[i], t1[i]/2)
			est[i] = scale * (t1[i].Seconds() + float64(full.Iterations-1)*later.Seconds())
		}
		s := spreadOf(est)
		r.HeaderSeconds, r.MinHeaderSeconds, r.MaxHeaderSeconds, r.Samples = s.Median, s.Min, s.Max, s.N
	}
	passes := float64(full.Iterations)
	r.IterationsPerSecond = round2(passes / r.HeaderSeconds)
	r.MinIterationsPerSecond, r.MaxIterationsPerSecond = round2(passes/r.MaxHeaderSeconds), round2(passes/r.MinHeaderSeconds)
	return r, nil
}

// timePairs times two operations alternately until minTime is spent (at
// least twice each) and returns the times of each, pair by pair.
// Alternating exposes both to the same load on a busy machine.
func timePairs(ctx context.Context, minTime time.Duration, a, b func() error) (ta, tb []time.Duration, err error) {
	var spent time.Duration
	for i := 0; spent < minTime || i < 4; i += 2 {
		for j, op := range []func() error{a, b} {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			t0 := time.Now()
			if err := op(); err != nil {
				return nil, nil, err
			}
			el := time.Since(t0)
			spent += el
			if j == 0 {
				ta = append(ta, el)
			} else {
				tb = append(tb, el)
			}
		}
	}
	return ta, tb, nil
}
