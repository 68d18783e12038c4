// Package stats is the arithmetic every benchmark reports its runs with
// (issue 28: a figure is the median of its runs, with their min–max).
package stats

import "slices"

// MedianRange is the median of xs (the mean of the middle two for an even
// count) with the min and max; zeros for none.
func MedianRange(xs []float64) (med, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}
