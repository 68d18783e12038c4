package chart

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// A comparison as text, for `cryptvol benchmark compare --format
// table|csv|json` (the SVG and HTML are in svg.go and html.go).

// WriteTable writes the comparison as an aligned table under a line that
// says what is compared and which way is better.
func (c *Comparison) WriteTable(w io.Writer) {
	head, rows := c.Table()
	how := "higher is better"
	if !c.HigherIsBetter {
		how = "lower is better"
	}
	fmt.Fprintf(w, "%s benchmark: %s (%s); ratios to %s\n\n", c.Kind, c.Metric, how, c.Labels[0])
	writeColumns(w, append([][]string{head}, rows...))
}

// WriteCSV writes the table's rows as CSV, the first column named "item".
func (c *Comparison) WriteCSV(w io.Writer) error {
	head, rows := c.Table()
	cw := csv.NewWriter(w)
	head[0] = "item"
	cw.Write(head)
	for _, r := range rows {
		cw.Write(r)
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes every item's values, ratios to the first run, and
// whether each run lies within the first's spread.
func (c *Comparison) WriteJSON(w io.Writer) error {
	type item struct {
		Name   string     `json:"name"`
		Values []*float64 `json:"values"`
		Ratios []*float64 `json:"ratios"`
		// Same[r]: run r and the first lie within each other's
		// spread (their min–max ranges overlap).
		Same []bool `json:"same"`
	}
	out := struct {
		Kind           Kind     `json:"kind"`
		Metric         string   `json:"metric"`
		HigherIsBetter bool     `json:"higher_is_better"`
		Runs           []string `json:"runs"`
		Items          []item   `json:"items"`
	}{c.Kind, c.Metric, c.HigherIsBetter, c.Labels, nil}
	for i, name := range c.Items {
		it := item{Name: name}
		for r := range c.Labels {
			it.Values = append(it.Values, finite(c.Values[i][r]))
			it.Ratios = append(it.Ratios, finite(c.Ratio(i, r)))
			it.Same = append(it.Same, r > 0 && c.Same(i, r))
		}
		out.Items = append(out.Items, it)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// NotSame reads what WriteJSON wrote (`benchmark compare --format json`)
// and lists the items where a run after the first is not "same" as the
// first, each as "item: label ratio". Between two runs of one build that
// is noise the runs' ranges did not cover (.ci/bench-trust wants none).
func NotSame(data []byte) ([]string, error) {
	var c struct {
		Runs  []string `json:"runs"`
		Items []struct {
			Name   string     `json:"name"`
			Ratios []*float64 `json:"ratios"`
			Same   []bool     `json:"same"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	if len(c.Runs) < 2 || len(c.Items) == 0 {
		return nil, fmt.Errorf("%w: not a comparison of two runs or more", ErrInput)
	}
	var out []string
	for _, it := range c.Items {
		for r := 1; r < len(c.Runs); r++ {
			if r < len(it.Same) && it.Same[r] {
				continue
			}
			ratio := "—"
			if r < len(it.Ratios) && it.Ratios[r] != nil {
				ratio = formatRatio(*it.Ratios[r])
			}
			out = append(out, fmt.Sprintf("%s: %s %s", it.Name, c.Runs[r], ratio))
		}
	}
	return out, nil
}

// BusyWarnings are the busy-machine warnings the runs' JSON carries (load
// average, CPU steal), each prefixed with its run's label: a ratio
// outside the spread between runs made under different loads says more
// about the load than about the code, and the reader should know.
func (c *Comparison) BusyWarnings() []string {
	var ws []string
	for i, r := range c.Runs {
		var rep struct {
			Warnings []string `json:"warnings"`
		}
		if json.Unmarshal(r.JSON, &rep) != nil {
			continue
		}
		for _, w := range rep.Warnings {
			if strings.HasPrefix(w, "the machine was busy") || strings.HasPrefix(w, "the hypervisor") {
				ws = append(ws, c.Labels[i]+": "+w)
			}
		}
	}
	return ws
}

// writeColumns prints rows as a table: the first column left-aligned, the
// others (numbers) right-aligned.
func writeColumns(w io.Writer, rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, cell := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(cell))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, cell := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell))
			if i == 0 {
				b.WriteString(cell + pad)
			} else {
				b.WriteString("  " + pad + cell)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// finite returns &v, or nil (JSON null) for NaN.
func finite(v float64) *float64 {
	if v != v {
		return nil
	}
	return &v
}
