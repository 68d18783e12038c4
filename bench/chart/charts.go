package chart

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// mb is TrueCrypt's megabyte, the unit of the benchmark's tables.
const mb = 1 << 20

const mbUnit = "MB/s (1 MB = 2^20 bytes)"

// formatMBps prints a speed in MB/s with three significant digits or so.
func formatMBps(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// formatSeconds prints a duration in seconds, or milliseconds below 0.1 s.
func formatSeconds(s float64) string {
	if s < 0.1 {
		return strconv.FormatFloat(s*1000, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(s, 'f', 2, 64) + " s"
}

// table is a chart's numbers as rows, for the HTML report and the CLI.
type table struct {
	head []string
	rows [][]string
}

// view is what one run draws: its chart and the table beside it.
type view struct {
	svg   string
	table table
}

// SVG draws the chart of one run.
func SVG(r *Run) (string, error) {
	v, err := r.view()
	if err != nil {
		return "", err
	}
	return v.svg, nil
}

func (r *Run) view() (view, error) {
	switch r.Kind {
	case KindCiphers:
		return r.ciphersView(), nil
	case KindKDF:
		return r.kdfView(), nil
	case KindMatrix:
		return r.matrixView(), nil
	case KindIO:
		return r.ioView(), nil
	}
	return view{}, fmt.Errorf("%w: no chart for %q results", ErrInput, r.Kind)
}

// subtitle says which machine and settings the figures belong to.
func (r *Run) subtitle(settings string) string {
	parts := []string{}
	if r.Machine.CPU != "" {
		parts = append(parts, r.Machine.CPU)
	}
	if r.Machine.GOOS != "" {
		parts = append(parts, r.Machine.GOOS+"/"+r.Machine.GOARCH)
	}
	if settings != "" {
		parts = append(parts, settings)
	}
	if r.Date != "" {
		parts = append(parts, r.Date)
	}
	return strings.Join(parts, "; ")
}

func (r *Run) ciphersView() view {
	c := barChart{
		title:  "Encryption speed (XTS), fastest first",
		unit:   mbUnit,
		series: []string{"Encrypt", "Decrypt", "Mean"},
		format: formatMBps,
	}
	c.subtitle = r.subtitle(fmt.Sprintf("buffer %s, %d thread(s)", sizeName(int64(r.Machine.Buffer)), r.Machine.Threads))
	t := table{head: []string{"Algorithm", "Encryption", "Decryption", "Mean", "Range (min–max)"}}
	for _, x := range r.Ciphers {
		c.categories = append(c.categories, x.Name)
		row := []float64{float64(x.EncryptBPS) / mb, float64(x.DecryptBPS) / mb, float64(x.MeanBPS) / mb}
		c.values = append(c.values, row)
		// The range is the mean's (reports before ranges have none).
		nan := math.NaN()
		lo, hi := nan, nan
		if x.MinBPS > 0 {
			lo, hi = float64(x.MinBPS)/mb, float64(x.MaxBPS)/mb
		}
		c.lo, c.hi = append(c.lo, []float64{nan, nan, lo}), append(c.hi, []float64{nan, nan, hi})
		rng := "—"
		if !math.IsNaN(lo) {
			rng = formatMBps(lo) + " – " + formatMBps(hi) + " MB/s"
		}
		t.rows = append(t.rows, []string{x.Name, formatMBps(row[0]) + " MB/s", formatMBps(row[1]) + " MB/s", formatMBps(row[2]) + " MB/s", rng})
	}
	return view{c.svg(), t}
}

// prfLabel names a KDF row, marking TrueCrypt's iteration counts.
func prfLabel(prf, format string) string {
	if format == "truecrypt" {
		return prf + " (TrueCrypt)"
	}
	return prf
}

func (r *Run) kdfView() view {
	c := barChart{
		title:  fmt.Sprintf("Unlock time per PRF: one header derivation at PIM %d", r.PIM),
		unit:   "seconds",
		series: []string{"Header key derivation"},
		format: formatSeconds,
	}
	c.subtitle = r.subtitle(fmt.Sprintf("%d core(s)", r.Machine.Threads))
	t := table{head: []string{"PRF", "Iterations/s (one core)", "Header iterations", "Unlock time"}}
	for _, k := range r.KDF {
		name := prfLabel(k.PRF, k.Format)
		c.categories = append(c.categories, name)
		c.values = append(c.values, []float64{k.HeaderSeconds})
		lo, hi := math.NaN(), math.NaN()
		if k.MinHeaderSeconds > 0 {
			lo, hi = k.MinHeaderSeconds, k.MaxHeaderSeconds
		}
		c.lo, c.hi = append(c.lo, []float64{lo}), append(c.hi, []float64{hi})
		t.rows = append(t.rows, []string{name, strconv.FormatFloat(k.IterationsPerSecond, 'f', 0, 64),
			strconv.Itoa(k.HeaderIterations), formatSeconds(k.HeaderSeconds)})
	}
	return view{c.svg(), t}
}

func (r *Run) matrixView() view {
	m := heatMap{title: "Volume creation speed, hash × encryption", unit: mbUnit, format: formatMBps}
	m.subtitle = r.subtitle(fmt.Sprintf("volumes of %s, PIM %d", sizeName(r.MatrixSize), r.PIM))
	ri, ci := map[string]int{}, map[string]int{}
	for _, x := range r.Matrix {
		if _, ok := ri[x.Hash]; !ok {
			ri[x.Hash] = len(m.rows)
			m.rows = append(m.rows, x.Hash)
		}
		if _, ok := ci[x.Encryption]; !ok {
			ci[x.Encryption] = len(m.cols)
			m.cols = append(m.cols, x.Encryption)
		}
	}
	m.values = make([][]float64, len(m.rows))
	for i := range m.values {
		m.values[i] = make([]float64, len(m.cols))
		for j := range m.values[i] {
			m.values[i][j] = math.NaN()
		}
	}
	t := table{head: []string{"Hash", "Encryption", "Create speed", "Header KDF"}}
	for _, x := range r.Matrix {
		m.values[ri[x.Hash]][ci[x.Encryption]] = x.CreateBPS / mb
		speed := formatMBps(x.CreateBPS/mb) + " MB/s"
		if x.MinCreateBPS > 0 && x.MaxCreateBPS >= x.MinCreateBPS {
			speed += " (" + formatMBps(x.MinCreateBPS/mb) + " – " + formatMBps(x.MaxCreateBPS/mb) + ")"
		}
		t.rows = append(t.rows, []string{x.Hash, x.Encryption, speed, formatSeconds(x.KDFSeconds)})
	}
	return view{m.svg(), t}
}

func (r *Run) ioView() view {
	io := r.IO
	c := barChart{
		title:      "Disk I/O: raw against encrypted",
		unit:       mbUnit,
		categories: []string{"Write (fsync)", "Read"},
		series:     []string{"Raw", "Encrypted"},
		values: [][]float64{
			{io.Raw.WriteBPS / mb, io.Encrypted.WriteBPS / mb},
			{io.Raw.ReadBPS / mb, io.Encrypted.ReadBPS / mb},
		},
		format: formatMBps,
	}
	// Error bars from each figure's range over the runs (none for runs
	// made before ranges were reported).
	rng := func(v, lo, hi float64) (float64, float64, string) {
		if lo <= 0 || hi < lo {
			return math.NaN(), math.NaN(), formatMBps(v/mb) + " MB/s"
		}
		return lo / mb, hi / mb, formatMBps(v/mb) + " MB/s (" + formatMBps(lo/mb) + " – " + formatMBps(hi/mb) + ")"
	}
	rwLo, rwHi, rw := rng(io.Raw.WriteBPS, io.Raw.WriteMinBPS, io.Raw.WriteMaxBPS)
	ewLo, ewHi, ew := rng(io.Encrypted.WriteBPS, io.Encrypted.WriteMinBPS, io.Encrypted.WriteMaxBPS)
	rrLo, rrHi, rr := rng(io.Raw.ReadBPS, io.Raw.ReadMinBPS, io.Raw.ReadMaxBPS)
	erLo, erHi, er := rng(io.Encrypted.ReadBPS, io.Encrypted.ReadMinBPS, io.Encrypted.ReadMaxBPS)
	c.lo = [][]float64{{rwLo, ewLo}, {rrLo, erLo}}
	c.hi = [][]float64{{rwHi, ewHi}, {rrHi, erHi}}
	c.subtitle = r.subtitle(fmt.Sprintf("%s in %s writes, %s, %s through %s", sizeName(io.Size), sizeName(int64(io.BlockSize)), io.Encryption, io.Filesystem, io.Via))
	t := table{head: []string{"", "Write (fsync), median (min–max)", "Read, median (min–max)"}}
	t.rows = [][]string{{"Raw", rw, rr}, {"Encrypted", ew, er}}
	return view{c.svg(), t}
}

// sizeName prints a byte count in binary units, as the CLI does.
func sizeName(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
