package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/bench"
	"github.com/cryptvol/cryptvol/bench/chart"
)

// compareFlags are `benchmark compare`'s own options.
var compareFlags struct {
	labels []string
}

func init() {
	registerBenchmark("compare", &benchmarkKind{
		summary: "line up runs saved with --format json or html: one column per run and the ratios",
		flags: func(fs *pflag.FlagSet) {
			fs.StringSliceVar(&compareFlags.labels, "labels", nil, "compare: names of the runs, comma-separated (default: the file names)")
		},
		run: runBenchCompare,
	})
}

// formatError says which --format values a kind takes.
func formatError(format string, charts bool) error {
	want := "table, csv or json"
	if charts {
		want = "table, csv, json, svg or html"
	}
	return usageError(fmt.Errorf("--format %q: want %s", format, want))
}

// isChart reports whether --format asks for a drawing.
func isChart(format string) bool { return format == "svg" || format == "html" }

// writeChart draws result, the value --format json prints for the run, as
// an SVG chart or an HTML report on stdout.
func writeChart(a *app, format string, result any) error {
	js, err := json.Marshal(result)
	if err != nil {
		return err
	}
	r, err := chart.FromJSON(js)
	if err != nil {
		return err
	}
	if r.Machine.CPU == "" {
		// matrix and io results do not name the machine; this one made them.
		rep := bench.NewReport(bench.Options{})
		r.Machine = chart.Machine{CPU: rep.CPU, GOOS: rep.GOOS, GOARCH: rep.GOARCH, Cores: rep.Cores, AESHW: rep.AESHW,
			Features: rep.Features, Implementations: rep.Implementations}
	}
	r.Date = time.Now().UTC().Format("2006-01-02 15:04 UTC")
	r.Version = "cryptvol " + version
	if format == "svg" {
		s, err := chart.SVG(r)
		if err != nil {
			return err
		}
		_, err = io.WriteString(a.stdout, s)
		return err
	}
	return chart.WriteHTML(a.stdout, r)
}

func runBenchCompare(ctx context.Context, a *app, bf *benchFlags, args []string) error {
	switch bf.format {
	case "table", "csv", "json", "svg", "html":
	default:
		return formatError(bf.format, true)
	}
	if len(args) == 0 {
		return usageError(errors.New("want two or more FILEs saved with 'cryptvol benchmark ... --format json' (or html)"))
	}
	var runs []*chart.Run
	for _, name := range args {
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		rs, err := chart.Parse(name, data)
		if err != nil {
			return withCode(exitUsage, err)
		}
		runs = append(runs, rs...)
	}
	if len(compareFlags.labels) > 0 {
		if len(compareFlags.labels) != len(runs) {
			return usageError(fmt.Errorf("--labels names %d runs, the files hold %d", len(compareFlags.labels), len(runs)))
		}
		for i, l := range compareFlags.labels {
			runs[i].Label = l
		}
	}
	c, err := chart.Compare(runs)
	if err != nil {
		return usageError(err)
	}
	warnBusyRuns(a, c)
	head, rows := c.Table()
	switch bf.format {
	case "svg":
		_, err := io.WriteString(a.stdout, c.SVG())
		return err
	case "html":
		return chart.WriteCompareHTML(a.stdout, c)
	case "json":
		type item struct {
			Name   string     `json:"name"`
			Values []*float64 `json:"values"`
			Ratios []*float64 `json:"ratios"`
			// Same[r]: run r and the first lie within each other's
			// spread (their min–max ranges overlap).
			Same []bool `json:"same"`
		}
		out := struct {
			Kind           chart.Kind `json:"kind"`
			Metric         string     `json:"metric"`
			HigherIsBetter bool       `json:"higher_is_better"`
			Runs           []string   `json:"runs"`
			Items          []item     `json:"items"`
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
		return writeJSON(a.stdout, out)
	case "csv":
		w := csv.NewWriter(a.stdout)
		head[0] = "item"
		w.Write(head)
		for _, r := range rows {
			w.Write(r)
		}
		w.Flush()
		return w.Error()
	}
	how := "higher is better"
	if !c.HigherIsBetter {
		how = "lower is better"
	}
	fmt.Fprintf(a.stdout, "%s benchmark: %s (%s); ratios to %s\n\n", c.Kind, c.Metric, how, c.Labels[0])
	printColumns(a.stdout, append([][]string{head}, rows...))
	return nil
}

// printColumns prints rows as a table: the first column left-aligned, the
// others (numbers) right-aligned.
func printColumns(w io.Writer, rows [][]string) {
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

// warnBusyRuns repeats, on stderr, the busy-machine warnings a run's JSON
// carries (load average, CPU steal): a ratio outside the spread between
// runs made under different loads says more about the load than about
// the code, and the reader of a comparison should know.
func warnBusyRuns(a *app, c *chart.Comparison) {
	for i, r := range c.Runs {
		var rep struct {
			Warnings []string `json:"warnings"`
		}
		if json.Unmarshal(r.JSON, &rep) != nil {
			continue
		}
		for _, w := range rep.Warnings {
			if strings.HasPrefix(w, "the machine was busy") || strings.HasPrefix(w, "the hypervisor") {
				a.warnf("%s: %s", c.Labels[i], w)
			}
		}
	}
}
