// Command trustcheck is the acceptance check of issue 28 item 5 that
// .ci/bench-trust runs: given runs of `cryptvol benchmark --format json`
// made back to back by one build, and `cryptvol benchmark compare` of the
// first two (--format json), it prints every row's medians and ranges and
// exits 1 if a run's median lies outside another run's min–max
// (bench.Disagreements) or compare reports a row as anything but "same"
// (chart.NotSame): the ranges then claimed less noise than there was.
//
//	go run ./bench/internal/trustcheck RUN1.json RUN2.json RUN3.json COMPARE.json
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/cryptvol/cryptvol/bench"
	"github.com/cryptvol/cryptvol/bench/chart"
	"github.com/cryptvol/cryptvol/internal/progress"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) < 3 {
		fmt.Fprintln(stderr, "usage: trustcheck RUN.json RUN.json... COMPARE.json")
		return 2
	}
	runs := make([]bench.Report, 0, len(args)-1)
	for _, name := range args[:len(args)-1] {
		var r bench.Report
		if err := readJSON(name, &r); err != nil {
			fmt.Fprintf(stderr, "trustcheck: %v\n", err)
			return 2
		}
		if len(r.Ciphers) == 0 && len(r.KDF) == 0 {
			fmt.Fprintf(stderr, "trustcheck: %s: no cipher or kdf rows\n", name)
			return 2
		}
		runs = append(runs, r)
	}
	cmp, err := os.ReadFile(args[len(args)-1])
	if err != nil {
		fmt.Fprintf(stderr, "trustcheck: %v\n", err)
		return 2
	}
	notSame, err := chart.NotSame(cmp)
	if err != nil {
		fmt.Fprintf(stderr, "trustcheck: %s: %v\n", args[len(args)-1], err)
		return 2
	}
	ds := bench.Disagreements(runs)
	writeTable(stdout, runs, ds)

	fmt.Fprintln(stdout)
	for i, r := range runs {
		fmt.Fprintf(stdout, "run %d: load average %.2f at the start, steal %.1f%%, %d warning(s)\n", i+1, r.LoadAverage, r.StealPercent, len(r.Warnings))
	}
	for _, d := range ds {
		fmt.Fprintf(stdout, "FAIL %s\n", d)
	}
	for _, s := range notSame {
		fmt.Fprintf(stdout, "FAIL compare run 1 vs run 2: not same: %s\n", s)
	}
	if len(ds) > 0 || len(notSame) > 0 {
		fmt.Fprintf(stdout, "bench-trust: FAIL: %d median(s) outside another run's range, %d row(s) of compare not same\n", len(ds), len(notSame))
		return 1
	}
	fmt.Fprintf(stdout, "bench-trust: ok: every median of %d runs within every other run's range; compare: every row same\n", len(runs))
	return 0
}

func readJSON(name string, v any) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	return nil
}

// writeTable prints one line per row: each run's median with its range,
// and the runs whose median is outside another run's range ("2 outside
// 1": run 2's median is outside run 1's range).
func writeTable(w io.Writer, runs []bench.Report, ds []bench.Disagreement) {
	figs := make([]map[string]bench.Figure, len(runs))
	names := map[string]bool{}
	for i, r := range runs {
		figs[i] = r.Figures()
		for n := range figs[i] {
			names[n] = true
		}
	}
	order := make([]string, 0, len(names))
	for n := range names {
		order = append(order, n)
	}
	// Fastest first for ciphers (as the benchmark's table), slowest
	// first for KDF header times: by the first run's median.
	sort.Slice(order, func(a, b int) bool {
		fa, fb := figs[0][order[a]], figs[0][order[b]]
		if fa.Median != fb.Median {
			return fa.Median > fb.Median
		}
		return order[a] < order[b]
	})
	bad := map[string][]string{}
	for _, d := range ds {
		bad[d.Name] = append(bad[d.Name], fmt.Sprintf("%d outside %d", d.Run+1, d.Other+1))
	}
	format := func(v float64) string { return progress.FormatRate(v) }
	unit := "cipher speeds per second (1 MB = 2^20 bytes)"
	if len(runs[0].KDF) > 0 {
		format, unit = progress.FormatSeconds, "time of one header derivation"
	}
	fmt.Fprintf(w, "Medians with each run's min–max, %s; \"outside\": run A's median outside run B's range\n\n", unit)
	rows := [][]string{{"row"}}
	for i := range runs {
		rows[0] = append(rows[0], fmt.Sprintf("run %d median (min – max)", i+1))
	}
	rows[0] = append(rows[0], "outside")
	for _, n := range order {
		row := []string{n}
		for i := range runs {
			f, ok := figs[i][n]
			if !ok {
				row = append(row, "—")
				continue
			}
			row = append(row, fmt.Sprintf("%s (%s – %s)", format(f.Median), format(f.Min), format(f.Max)))
		}
		verdict := "ok"
		if b := bad[n]; len(b) > 0 {
			verdict = strings.Join(b, ", ")
		}
		rows = append(rows, append(row, verdict))
	}
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c + strings.Repeat(" ", width[i]-len([]rune(c))))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
