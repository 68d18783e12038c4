package stats

import "testing"

func TestMedianRange(t *testing.T) {
	for _, c := range []struct {
		xs          []float64
		med, lo, hi float64
	}{
		{nil, 0, 0, 0},
		{[]float64{7}, 7, 7, 7},
		{[]float64{3, 1, 2}, 2, 1, 3},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4},
		{[]float64{5, 5, 1, 9, 5}, 5, 1, 9},
	} {
		in := append([]float64(nil), c.xs...)
		med, lo, hi := MedianRange(c.xs)
		if med != c.med || lo != c.lo || hi != c.hi {
			t.Errorf("MedianRange(%v) = %v, %v, %v; want %v, %v, %v", c.xs, med, lo, hi, c.med, c.lo, c.hi)
		}
		for i := range in {
			if in[i] != c.xs[i] {
				t.Fatalf("MedianRange sorted its argument: %v", c.xs)
			}
		}
	}
}
