package bench

import (
	"context"
	"math"
	"time"

	"github.com/cryptvol/cryptvol/internal/stats"
)

// samplesPerRun is how many samples each measured op gets, and the
// measuring time is split into. A figure is the median of the samples,
// reported with their range: on a shared machine one sample can be half
// as fast as the next, and a benchmark that reports only its best (or
// one) sample hides that (issue 28).
//
// Why 21: a range is only honest if another run's median falls inside it.
// For samples drawn alike, the chance that the median of n falls outside
// the min–max of another n is about 7% for n = 7, 1.3% for 11 and 0.02%
// for 21 (whatever the distribution: it is a matter of ranks). Three runs
// of 17 ciphers are 102 such checks: with 7 samples a perfect benchmark
// would fail one of them almost always, with 21 about one time in 50.
const samplesPerRun = 21

// minSamples is the fewest samples a figure rests on when each call is
// slower than a sample should last (a 5 MiB call of a triple cascade at
// 30 MB/s lasts longer than the whole 100 ms measuring time): with one
// sample the range is zero and says the figure is exact when it is only
// one draw; three back-to-back runs on a loaded machine showed 8 of 17
// rows so (issue 28). An op gets its samplesPerRun samples unless it has
// spent maxTimeFactor × minTime, which bounds an op slower still; so any
// op whose call lasts up to maxTimeFactor × minTime / minSamples keeps at
// least minSamples.
const (
	minSamples    = 5
	maxTimeFactor = 30
)

// maxSizings bounds the samples spent sizing an op's samples.
const maxSizings = 5

// Spread is a measured time per call over a run's samples: the median and
// the range, in seconds, and how many samples there were.
type Spread struct {
	Median, Min, Max float64
	N                int
}

// Rel is the range relative to the median: (max-min)/median.
func (s Spread) Rel() float64 {
	if s.Median <= 0 {
		return 0
	}
	return (s.Max - s.Min) / s.Median
}

// spreadOf summarises per-call times (not empty).
func spreadOf(ts []float64) Spread {
	med, lo, hi := stats.MedianRange(ts)
	return Spread{Median: max(med, 1e-12), Min: max(lo, 1e-12), Max: max(hi, 1e-12), N: len(ts)}
}

// timedOp is one thing a run measures: an algorithm in one direction.
type timedOp struct {
	name string // what Options.Trying is told while it runs
	run  func() error
}

// sampleHooks are what measureAll tells its caller; nil ones are skipped.
type sampleHooks struct {
	// trying is called with the op's name before each of its samples.
	trying func(name string)
	// progress is called after each sample with the samples done and
	// the total (every op's samplesPerRun).
	progress func(done, total int)
}

// measureAll times every op and returns, for each, the time in seconds
// one call takes, over its samples (a float: a 4 KiB call lasts a few
// hundred nanoseconds, where whole nanoseconds would be too coarse).
//
// The samples of all ops are interleaved: round after round, each op takes
// one sample. Taken back to back, an op's samples lasted 100 ms of a run
// of seconds, and their min–max saw only the load of those 100 ms: three
// runs on a loaded machine had medians outside each other's ranges for 17
// of 17 ciphers (issue 28). Interleaved, each op's samples spread
// over the whole run, so its range shows the load the run went through
// and a figure is not better or worse for the moment its turn came.
//
// Before the rounds, each op is warmed up (the first call fills the sector
// layer's buffer pools and the caches) and sized: a sample repeats the op
// enough times to last about minTime/samplesPerRun, so even a 4 KiB call
// of a microsecond is timed over thousands of calls. Neither the warm-up
// nor the sizing samples count. An op that has spent maxTimeFactor ×
// minTime takes no more samples (one at the least).
func measureAll(ctx context.Context, minTime time.Duration, ops []timedOp, h sampleHooks) ([]Spread, error) {
	target := max(minTime/samplesPerRun, time.Microsecond)
	budget := maxTimeFactor * minTime
	reps := make([]int, len(ops))
	spent := make([]time.Duration, len(ops))
	kept := make([][]float64, len(ops))
	for i, op := range ops {
		h.try(op.name)
		el, err := timeCalls(ctx, op.run, 1) // the warm-up
		if err != nil {
			return nil, err
		}
		spent[i] = el
		reps[i] = repsFor(target, el, 1)
		// One call that already fills a sample needs no sizing. Otherwise
		// the size is tried until a sample lasts between half and twice
		// the target: a warm-up that was quicker than the calls after it
		// (a sleep, a descheduled thread) makes samples too long, which
		// would use up the budget before the last rounds. On a machine so
		// noisy that no size lands there, the last one is kept.
		for try := 0; try < maxSizings && reps[i] > 1 && spent[i] < budget; try++ {
			el, err := timeCalls(ctx, op.run, reps[i])
			if err != nil {
				return nil, err
			}
			spent[i] += el
			if el >= target/2 && el <= 2*target {
				break
			}
			reps[i] = repsFor(target, el, reps[i])
		}
	}
	total, done := len(ops)*samplesPerRun, 0
	for round := range samplesPerRun {
		for i, op := range ops {
			if round > 0 && spent[i] >= budget {
				if len(kept[i]) == round { // its remaining samples count as done
					done += samplesPerRun - round
					h.advance(done, total)
				}
				continue
			}
			h.try(op.name)
			el, err := timeCalls(ctx, op.run, reps[i])
			if err != nil {
				return nil, err
			}
			spent[i] += el
			kept[i] = append(kept[i], el.Seconds()/float64(reps[i]))
			done++
			h.advance(done, total)
		}
	}
	out := make([]Spread, len(ops))
	for i := range ops {
		out[i] = spreadOf(kept[i])
	}
	return out, nil
}

// timeCalls times reps calls of run, checking ctx first.
func timeCalls(ctx context.Context, run func() error, reps int) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t0 := time.Now()
	for range reps {
		if err := run(); err != nil {
			return 0, err
		}
	}
	return time.Since(t0), nil
}

func (h sampleHooks) try(name string) {
	if h.trying != nil {
		h.trying(name)
	}
}

func (h sampleHooks) advance(done, total int) {
	if h.progress != nil {
		h.progress(done, total)
	}
}

// repsFor returns how many calls fill target, given that reps calls took el.
func repsFor(target, el time.Duration, reps int) int {
	el = max(el, time.Nanosecond)
	n := int(float64(reps) * float64(target) / float64(el))
	return max(1, min(n, reps*100))
}

// rateRange turns a time per call of work units into rates: the median,
// the lowest (from the slowest sample) and the highest.
func rateRange(work float64, s Spread) (med, lo, hi float64) {
	return work / s.Median, work / s.Max, work / s.Min
}

// round2 rounds to two decimals (Argon2id manages a few passes a second).
func round2(x float64) float64 { return math.Round(100*x) / 100 }
