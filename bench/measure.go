package bench

import (
	"context"
	"time"
)

// samplesPerRun is how many samples MinTime is split into; the fastest one
// is reported.
const samplesPerRun = 5

// fastest runs op repeatedly for about minTime and returns the time in
// seconds one call takes in the fastest sample (a float: a 4 KiB call lasts
// a few hundred nanoseconds, where whole nanoseconds would be too coarse).
//
// The first call is a warm-up (it fills the sector layer's buffer pools and
// the caches) and only sizes the first sample. Each sample repeats op enough
// times to last about minTime/samplesPerRun, so even a 4 KiB call of a
// microsecond is timed over thousands of calls; a sample that turns out much
// shorter resizes the next one. Sampling stops once minTime has been spent
// on samples, so an op slower than minTime gets a single sample.
func fastest(ctx context.Context, minTime time.Duration, op func() error) (float64, error) {
	target := max(minTime/samplesPerRun, time.Microsecond)
	start := time.Now()
	if err := op(); err != nil {
		return 0, err
	}
	reps := repsFor(target, time.Since(start), 1)
	best, last := -1.0, 0.0
	var spent time.Duration
	for spent < minTime {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		t0 := time.Now()
		for range reps {
			if err := op(); err != nil {
				return 0, err
			}
		}
		el := time.Since(t0)
		spent += el
		per := el.Seconds() / float64(reps)
		last = per
		if el >= target/2 && (best < 0 || per < best) {
			best = per
		}
		if el < target/2 {
			// Too short to trust: resize and measure again (the time is
			// still spent, so a pathological op cannot loop forever).
			reps = repsFor(target, el, reps)
		}
	}
	if best < 0 {
		// Every sample was short of target/2: minTime ran out while the
		// samples were still being sized. Take the last, largest one.
		best = last
	}
	return max(best, 1e-12), nil
}

// repsFor returns how many calls fill target, given that reps calls took el.
func repsFor(target, el time.Duration, reps int) int {
	el = max(el, time.Nanosecond)
	n := int(float64(reps) * float64(target) / float64(el))
	return max(1, min(n, reps*100))
}
