package chart

import (
	"fmt"
	"math"
	"strings"
)

// Comparison lines several runs of one kind up: one value per item (a
// cipher, a PRF, a hash × encryption, an I/O pass) and run, and each run's
// ratio to the first.
type Comparison struct {
	Kind   Kind
	Runs   []*Run
	Labels []string // one per run, made unique
	// Metric names the value compared and its unit; HigherIsBetter tells
	// how to read the ratios (speeds: more is better; times: less).
	Metric         string
	HigherIsBetter bool
	Items          []string
	// Values[i][r] is item i in run r; NaN where that run lacks the item.
	Values [][]float64
	// Lo[i][r] and Hi[i][r] are that value's range over the run's samples
	// (NaN for runs of versions that reported no range).
	Lo, Hi [][]float64
}

// Same reports whether item i of run r and of the first run lie within
// each other's spread (their ranges overlap): the difference between them
// is noise, not a finding, and the table says "same" instead of a ratio.
func (c *Comparison) Same(i, r int) bool {
	lo0, hi0, lo, hi := c.Lo[i][0], c.Hi[i][0], c.Lo[i][r], c.Hi[i][r]
	for _, v := range []float64{lo0, hi0, lo, hi} {
		if math.IsNaN(v) {
			return false
		}
	}
	return lo <= hi0 && lo0 <= hi
}

// Compare lines the runs up; they must all be of one kind.
func Compare(runs []*Run) (*Comparison, error) {
	if len(runs) < 2 {
		return nil, fmt.Errorf("%w: compare needs two runs or more, got %d", ErrInput, len(runs))
	}
	c := &Comparison{Kind: runs[0].Kind, Runs: runs}
	for _, r := range runs {
		if r.Kind != c.Kind {
			return nil, fmt.Errorf("%w: cannot compare %s results (%s) with %s results (%s)", ErrInput, r.Kind, r.Label, c.Kind, runs[0].Label)
		}
	}
	c.Labels = uniqueLabels(runs)
	index := map[string]int{}
	nanRow := func() []float64 {
		row := make([]float64, len(runs))
		for j := range row {
			row[j] = math.NaN()
		}
		return row
	}
	// setRange sets a value with its range (lo, hi; zero when unknown).
	setRange := func(item string, run int, v, lo, hi float64) {
		i, ok := index[item]
		if !ok {
			i = len(c.Items)
			index[item] = i
			c.Items = append(c.Items, item)
			c.Values, c.Lo, c.Hi = append(c.Values, nanRow()), append(c.Lo, nanRow()), append(c.Hi, nanRow())
		}
		c.Values[i][run] = v
		if lo > 0 && hi >= lo {
			c.Lo[i][run], c.Hi[i][run] = lo, hi
		}
	}
	for ri, r := range runs {
		switch c.Kind {
		case KindCiphers:
			c.Metric, c.HigherIsBetter = "Mean "+mbUnit, true
			for _, x := range r.Ciphers {
				setRange(x.Name, ri, float64(x.MeanBPS)/mb, float64(x.MinBPS)/mb, float64(x.MaxBPS)/mb)
			}
		case KindKDF:
			c.Metric, c.HigherIsBetter = "Unlock time (one header derivation), seconds", false
			for _, k := range r.KDF {
				setRange(prfLabel(k.PRF, k.Format), ri, k.HeaderSeconds, k.MinHeaderSeconds, k.MaxHeaderSeconds)
			}
		case KindMatrix:
			c.Metric, c.HigherIsBetter = "Creation speed, "+mbUnit, true
			for _, x := range r.Matrix {
				setRange(x.Hash+" / "+x.Encryption, ri, x.CreateBPS/mb, x.MinCreateBPS/mb, x.MaxCreateBPS/mb)
			}
		case KindIO:
			c.Metric, c.HigherIsBetter = mbUnit, true
			for _, p := range []struct {
				name string
				s    IOSpeed
			}{{"Raw", r.IO.Raw}, {"Encrypted", r.IO.Encrypted}} {
				setRange(p.name+" write", ri, p.s.WriteBPS/mb, p.s.WriteMinBPS/mb, p.s.WriteMaxBPS/mb)
				setRange(p.name+" read", ri, p.s.ReadBPS/mb, p.s.ReadMinBPS/mb, p.s.ReadMaxBPS/mb)
			}
		default:
			return nil, fmt.Errorf("%w: no comparison for %q results", ErrInput, c.Kind)
		}
	}
	return c, nil
}

// uniqueLabels returns the runs' labels, numbered where two are alike.
func uniqueLabels(runs []*Run) []string {
	seen := map[string]int{}
	for _, r := range runs {
		seen[r.Label]++
	}
	out := make([]string, len(runs))
	n := map[string]int{}
	for i, r := range runs {
		l := r.Label
		if l == "" {
			l = fmt.Sprintf("run %d", i+1)
		}
		if seen[r.Label] > 1 {
			n[r.Label]++
			l = fmt.Sprintf("%s (%d)", l, n[r.Label])
		}
		out[i] = l
	}
	return out
}

// Ratio is item i of run r divided by the same item of the first run
// (NaN where either is missing or the first is zero).
func (c *Comparison) Ratio(i, r int) float64 {
	base := c.Values[i][0]
	if base == 0 || math.IsNaN(base) {
		return math.NaN()
	}
	return c.Values[i][r] / base
}

func (c *Comparison) format(v float64) string {
	if c.Kind == KindKDF {
		return formatSeconds(v)
	}
	return formatMBps(v)
}

// Table is the comparison as rows: the item, each run's value and, for
// every run after the first, its ratio to the first — or "same" where the
// two lie within each other's spread.
func (c *Comparison) Table() (head []string, rows [][]string) {
	head = append(head, "")
	for r, l := range c.Labels {
		head = append(head, l)
		if r > 0 {
			head = append(head, l+" / "+c.Labels[0])
		}
	}
	for i, item := range c.Items {
		row := []string{item}
		for r := range c.Labels {
			v := c.Values[i][r]
			if math.IsNaN(v) {
				row = append(row, "—")
			} else {
				row = append(row, c.format(v))
			}
			if r > 0 {
				if c.Same(i, r) {
					row = append(row, "same")
				} else {
					row = append(row, formatRatio(c.Ratio(i, r)))
				}
			}
		}
		rows = append(rows, row)
	}
	return head, rows
}

// formatRatio prints a ratio as "1.93x" (two decimals below 10).
func formatRatio(x float64) string {
	switch {
	case math.IsNaN(x):
		return "—"
	case x >= 10:
		return fmt.Sprintf("%.1fx", x)
	case x < 0.1:
		return fmt.Sprintf("%.3fx", x)
	}
	return fmt.Sprintf("%.2fx", x)
}

// SVG draws the comparison: one group per item, one bar per run.
func (c *Comparison) SVG() string {
	how := "higher is better"
	if !c.HigherIsBetter {
		how = "lower is better"
	}
	b := barChart{
		title:      fmt.Sprintf("%s benchmark: %s", c.Kind, strings.Join(c.Labels, " vs ")),
		subtitle:   fmt.Sprintf("%s; %s; ratios to %s in the table", c.Metric, how, c.Labels[0]),
		unit:       c.Metric,
		categories: c.Items,
		series:     c.Labels,
		values:     c.Values,
		lo:         c.Lo,
		hi:         c.Hi,
		format:     c.format,
	}
	return b.svg()
}
