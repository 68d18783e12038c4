package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

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
	for _, w := range c.BusyWarnings() {
		a.warnf("%s", w)
	}
	switch bf.format {
	case "svg":
		_, err := io.WriteString(a.stdout, c.SVG())
		return err
	case "html":
		return chart.WriteCompareHTML(a.stdout, c)
	case "json":
		return c.WriteJSON(a.stdout)
	case "csv":
		return c.WriteCSV(a.stdout)
	}
	c.WriteTable(a.stdout)
	return nil
}
