package bench

import (
	"context"
	"math"
	"time"

	"github.com/cryptvol/cryptvol/internal/stats"
)

// samplesPerRun is how many samples MinTime is split into. A figure is
// the median of the samples, reported with their range: on a shared
// machine one sample can be half as fast as the next, and a benchmark
// that reports only its best (or one) sample hides that (issue 28).
const samplesPerRun = 7

// minSamples is the fewest samples a figure rests on when the op is slow:
// with one sample (a 5 MiB call of a triple cascade at 30 MB/s lasts
// longer than the whole 100 ms measuring time) the range is zero and says
// the figure is exact when it is only one draw; three back-to-back runs
// on a loaded machine showed 8 of 17 rows so (issue 28). Sampling goes on
// past minTime until there are minSamples, but never past
// maxTimeFactor × minTime, which bounds an op slower still.
const (
	minSamples    = 5
	maxTimeFactor = 10
)

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

// measure runs op repeatedly for about minTime and returns the time in
// seconds one call takes, over the samples (a float: a 4 KiB call lasts a
// few hundred nanoseconds, where whole nanoseconds would be too coarse).
//
// The first call is a warm-up (it fills the sector layer's buffer pools and
// the caches) and only sizes the first sample. Each sample repeats op enough
// times to last about minTime/samplesPerRun, so even a 4 KiB call of a
// microsecond is timed over thousands of calls; a sample that turns out much
// shorter resizes the next one and does not count. Sampling stops once
// minTime has been spent on samples and there are minSamples of them, or
// once maxTimeFactor × minTime has been spent, so an op slower than that
// gets fewer (one at the least).
func measure(ctx context.Context, minTime time.Duration, op func() error) (Spread, error) {
	target := max(minTime/samplesPerRun, time.Microsecond)
	start := time.Now()
	if err := op(); err != nil {
		return Spread{}, err
	}
	reps := repsFor(target, time.Since(start), 1)
	var kept []float64
	last := 0.0
	var spent time.Duration
	for spent < minTime || (len(kept) < minSamples && spent < maxTimeFactor*minTime) {
		if err := ctx.Err(); err != nil {
			return Spread{}, err
		}
		t0 := time.Now()
		for range reps {
			if err := op(); err != nil {
				return Spread{}, err
			}
		}
		el := time.Since(t0)
		spent += el
		per := el.Seconds() / float64(reps)
		last = per
		if el >= target/2 {
			kept = append(kept, per)
		} else {
			// Too short to trust: resize and measure again (the time is
			// still spent, so a pathological op cannot loop forever).
			reps = repsFor(target, el, reps)
		}
	}
	if len(kept) == 0 {
		// Every sample was short of target/2: minTime ran out while the
		// samples were still being sized. Take the last, largest one.
		kept = []float64{last}
	}
	return spreadOf(kept), nil
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
