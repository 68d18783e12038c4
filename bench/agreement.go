package bench

import (
	"fmt"
	"sort"
)

// Figure is one row of a run as the agreement check reads it: the median
// and the min–max the run reported (bytes per second for a cipher, header
// seconds for a KDF).
type Figure struct {
	Median, Min, Max float64
}

// Figures are the rows of a run of the cipher or KDF benchmark by name
// (a chain, a PRF).
func (r Report) Figures() map[string]Figure {
	out := map[string]Figure{}
	for _, c := range r.Ciphers {
		out[c.Name] = Figure{float64(c.MedianBPS), float64(c.MinBPS), float64(c.MaxBPS)}
	}
	for _, k := range r.KDF {
		out[k.PRF] = Figure{k.HeaderSeconds, k.MinHeaderSeconds, k.MaxHeaderSeconds}
	}
	return out
}

// Disagreement is a row where one run's median lies outside another run's
// min–max, or that one of the runs lacks. Between runs of one build on one
// machine that means the ranges claimed less noise than there was: a
// benchmark that reports its noise honestly has every median of a run
// within the range of every other run (issue 28's acceptance, checked by
// .ci/bench-trust).
type Disagreement struct {
	Name string
	// Run is the index of the run whose median is outside the range of
	// run Other.
	Run, Other int
	Median     float64
	Range      Figure // Other's figure
	Missing    bool   // Other has no such row
}

func (d Disagreement) String() string {
	if d.Missing {
		return fmt.Sprintf("%s: in run %d, not in run %d", d.Name, d.Run+1, d.Other+1)
	}
	return fmt.Sprintf("%s: the median of run %d, %.6g, is outside run %d's range %.6g – %.6g (by %.1f%%)", d.Name, d.Run+1, d.Median, d.Other+1, d.Range.Min, d.Range.Max, 100*d.Beyond())
}

// Beyond is how far the median lies outside the other run's range,
// relative to the nearer end: 0.001 is a near miss at the edge of the
// noise, 0.5 a run that saw another machine (0 for a missing row).
func (d Disagreement) Beyond() float64 {
	switch {
	case d.Missing:
		return 0
	case d.Median < d.Range.Min && d.Range.Min > 0:
		return (d.Range.Min - d.Median) / d.Range.Min
	case d.Median > d.Range.Max && d.Range.Max > 0:
		return (d.Median - d.Range.Max) / d.Range.Max
	}
	return 0
}

// Disagreements checks runs of one kind against each other: for every row
// of every run, its median must lie within the min–max of that row in
// each other run. The result is sorted by row name, then run.
func Disagreements(runs []Report) []Disagreement {
	figs := make([]map[string]Figure, len(runs))
	for i, r := range runs {
		figs[i] = r.Figures()
	}
	var out []Disagreement
	for i := range runs {
		for name, f := range figs[i] {
			for j := range runs {
				if j == i {
					continue
				}
				g, ok := figs[j][name]
				switch {
				case !ok:
					out = append(out, Disagreement{Name: name, Run: i, Other: j, Median: f.Median, Missing: true})
				case f.Median < g.Min || f.Median > g.Max:
					out = append(out, Disagreement{Name: name, Run: i, Other: j, Median: f.Median, Range: g})
				}
			}
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Name != out[b].Name {
			return out[a].Name < out[b].Name
		}
		if out[a].Run != out[b].Run {
			return out[a].Run < out[b].Run
		}
		return out[a].Other < out[b].Other
	})
	return out
}
