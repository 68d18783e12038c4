package chart

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden SVG files in testdata/golden")

// fixtures are real outputs of `cryptvol benchmark ... --format json`
// (short runs on the development machine), one per kind.
var fixtures = map[Kind]string{
	KindCiphers: "testdata/ciphers.json",
	KindKDF:     "testdata/kdf.json",
	KindMatrix:  "testdata/matrix.json",
	KindIO:      "testdata/io.json",
}

func loadRun(t *testing.T, k Kind) *Run {
	t.Helper()
	data, err := os.ReadFile(fixtures[k])
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Parse(fixtures[k], data)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Kind != k {
		t.Fatalf("%s: parsed %d runs, first of kind %q; want one %s run", fixtures[k], len(runs), runs[0].Kind, k)
	}
	return runs[0]
}

// element is one drawn element of an SVG, as encoding/xml parsed it.
type element struct {
	name  string
	attrs map[string]string
	text  string
}

// parseSVG checks that doc is well-formed XML with an <svg> root and
// returns its elements in document order.
func parseSVG(t *testing.T, doc string) []element {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	var out []element
	var stack []int
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if len(out) == 0 && (tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("root element %v, want svg in the SVG namespace", tok.Name)
			}
			e := element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			stack = append(stack, len(out))
			out = append(out, e)
		case xml.CharData:
			if len(stack) > 0 {
				out[stack[len(stack)-1]].text += string(tok)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if len(out) == 0 {
		t.Fatal("empty SVG")
	}
	return out
}

func texts(els []element) map[string]bool {
	m := map[string]bool{}
	for _, e := range els {
		if e.name == "text" {
			m[strings.TrimSpace(e.text)] = true
		}
	}
	return m
}

// bars returns the value of every bar, by category and series.
func bars(t *testing.T, els []element) map[[2]string]float64 {
	t.Helper()
	m := map[[2]string]float64{}
	for _, e := range els {
		if e.attrs["class"] != "bar" {
			continue
		}
		k := [2]string{e.attrs["data-category"], e.attrs["data-series"]}
		if _, dup := m[k]; dup {
			t.Errorf("two bars for %v", k)
		}
		v, err := strconv.ParseFloat(e.attrs["data-value"], 64)
		if err != nil {
			t.Fatalf("bar %v: data-value %q", k, e.attrs["data-value"])
		}
		m[k] = v
	}
	return m
}

// checkScale verifies that every bar's width is proportional to its value
// (to the 0.1 px the SVG is written in; the thinnest bars are 0.5 px).
func checkScale(t *testing.T, els []element) {
	t.Helper()
	var vs, ws []float64
	perUnit := 0.0
	for _, e := range els {
		if e.attrs["class"] != "bar" {
			continue
		}
		v, _ := strconv.ParseFloat(e.attrs["data-value"], 64)
		w, _ := strconv.ParseFloat(e.attrs["width"], 64)
		vs, ws = append(vs, v), append(ws, w)
		if v > 0 && w > 100 && (perUnit == 0 || w/v < perUnit) {
			perUnit = w / v
		}
	}
	if perUnit == 0 {
		t.Fatal("no bar wider than 100 px to take the scale from")
	}
	for i, v := range vs {
		w := ws[i]
		if want := math.Max(v*perUnit, 0.5); math.Abs(w-want) > 0.1+want*2e-3 {
			t.Errorf("bar %d: width %.1f for value %g, want %.1f (same scale as the others)", i, w, v, want)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

func TestCiphersChart(t *testing.T) {
	r := loadRun(t, KindCiphers)
	if len(r.Ciphers) != 15 {
		t.Fatalf("%d ciphers in the fixture, want VeraCrypt's 15", len(r.Ciphers))
	}
	doc, err := SVG(r)
	if err != nil {
		t.Fatal(err)
	}
	els := parseSVG(t, doc)
	txt, got := texts(els), bars(t, els)
	if len(got) != 3*len(r.Ciphers) {
		t.Errorf("%d bars, want %d (Encrypt, Decrypt, Mean for each of %d)", len(got), 3*len(r.Ciphers), len(r.Ciphers))
	}
	for _, c := range r.Ciphers {
		if !txt[c.Name] {
			t.Errorf("no label %q", c.Name)
		}
		for series, bps := range map[string]int64{"Encrypt": c.EncryptBPS, "Decrypt": c.DecryptBPS, "Mean": c.MeanBPS} {
			if v, ok := got[[2]string{c.Name, series}]; !ok || !near(v, float64(bps)/mb) {
				t.Errorf("%s %s: bar %g (present %v), want %g MB/s", c.Name, series, v, ok, float64(bps)/mb)
			}
		}
	}
	checkScale(t, els)
	golden(t, "ciphers.svg", doc)
}

func TestKDFChart(t *testing.T) {
	r := loadRun(t, KindKDF)
	doc, err := SVG(r)
	if err != nil {
		t.Fatal(err)
	}
	els := parseSVG(t, doc)
	txt, got := texts(els), bars(t, els)
	if len(got) != len(r.KDF) {
		t.Errorf("%d bars, want one per PRF (%d)", len(got), len(r.KDF))
	}
	for _, k := range r.KDF {
		name := prfLabel(k.PRF, k.Format)
		if !txt[name] {
			t.Errorf("no label %q", name)
		}
		if v := got[[2]string{name, "Header key derivation"}]; !near(v, k.HeaderSeconds) {
			t.Errorf("%s: bar %g, want %g s", name, v, k.HeaderSeconds)
		}
	}
	checkScale(t, els)
	golden(t, "kdf.svg", doc)
}

func TestMatrixChart(t *testing.T) {
	r := loadRun(t, KindMatrix)
	doc, err := SVG(r)
	if err != nil {
		t.Fatal(err)
	}
	els := parseSVG(t, doc)
	txt := texts(els)
	cells := map[[2]string]float64{}
	for _, e := range els {
		if e.attrs["class"] == "cell" {
			v, _ := strconv.ParseFloat(e.attrs["data-value"], 64)
			cells[[2]string{e.attrs["data-row"], e.attrs["data-col"]}] = v
		}
	}
	if len(cells) != len(r.Matrix) {
		t.Errorf("%d cells, want one per volume (%d)", len(cells), len(r.Matrix))
	}
	for _, x := range r.Matrix {
		if !txt[x.Hash] || !txt[x.Encryption] {
			t.Errorf("labels %q / %q missing", x.Hash, x.Encryption)
		}
		if v := cells[[2]string{x.Hash, x.Encryption}]; !near(v, x.CreateBPS/mb) {
			t.Errorf("%s / %s: cell %g, want %g MB/s", x.Hash, x.Encryption, v, x.CreateBPS/mb)
		}
	}
	golden(t, "matrix.svg", doc)
}

func TestIOChart(t *testing.T) {
	r := loadRun(t, KindIO)
	doc, err := SVG(r)
	if err != nil {
		t.Fatal(err)
	}
	els := parseSVG(t, doc)
	got := bars(t, els)
	want := map[[2]string]float64{
		{"Write (fsync)", "Raw"}: r.IO.Raw.WriteBPS / mb, {"Write (fsync)", "Encrypted"}: r.IO.Encrypted.WriteBPS / mb,
		{"Read", "Raw"}: r.IO.Raw.ReadBPS / mb, {"Read", "Encrypted"}: r.IO.Encrypted.ReadBPS / mb,
	}
	if len(got) != len(want) {
		t.Errorf("%d bars, want %d", len(got), len(want))
	}
	for k, v := range want {
		if !near(got[k], v) {
			t.Errorf("%v: bar %g, want %g", k, got[k], v)
		}
	}
	checkScale(t, els)
	golden(t, "io.svg", doc)
}

// golden compares doc with testdata/golden/name (go test -update rewrites it).
func golden(t *testing.T, name, doc string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != doc {
		a, b := strings.Split(string(want), "\n"), strings.Split(doc, "\n")
		for i := 0; i < len(a) || i < len(b); i++ {
			if i >= len(a) || i >= len(b) || a[i] != b[i] {
				t.Fatalf("%s differs from the golden file at line %d (go test -update after checking the change):\n want %q\n got  %q", name, i+1, at(a, i), at(b, i))
			}
		}
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<end>"
}

// TestHTMLReportRoundTrip: the report of every kind holds the machine,
// the chart and the table, and reads back to the same results.
func TestHTMLReportRoundTrip(t *testing.T) {
	for k := range fixtures {
		t.Run(string(k), func(t *testing.T) {
			r := loadRun(t, k)
			r.Date, r.Version = "2026-12-01 10:00 UTC", "v1.2.3-test"
			if r.Machine.CPU == "" {
				r.Machine = Machine{CPU: "Test CPU", GOOS: "linux", GOARCH: "amd64", Cores: 2}
			}
			var b bytes.Buffer
			if err := WriteHTML(&b, r); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			for _, want := range []string{"<svg", "<table>", r.Machine.CPU, r.Date, r.Version, `id="cryptvol-benchmark"`, "default-src 'none'"} {
				if !strings.Contains(page, want) {
					t.Errorf("the report lacks %q", want)
				}
			}
			assertNoFetch(t, page)
			back, err := Parse("report.html", b.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if len(back) != 1 {
				t.Fatalf("%d runs read back", len(back))
			}
			g := back[0]
			if g.Kind != r.Kind || g.Date != r.Date || g.Version != r.Version || g.Machine.CPU != r.Machine.CPU ||
				!reflect.DeepEqual(g.Ciphers, r.Ciphers) || !reflect.DeepEqual(g.KDF, r.KDF) ||
				!reflect.DeepEqual(g.Matrix, r.Matrix) || !reflect.DeepEqual(g.IO, r.IO) {
				t.Errorf("read back differently:\n got  %+v\n want %+v", g, r)
			}
		})
	}
}

// assertNoFetch checks a page names nothing a browser would load: no
// src/href attributes, no url() but data: URLs, no @import.
func assertNoFetch(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{" src=", " href=", "@import", "url(http", "url(//", "<link", "<img", "<iframe"} {
		if strings.Contains(page, bad) {
			t.Errorf("the report contains %q: it must load nothing", bad)
		}
	}
}

// TestCompareRatios: the ratios are those the two runs' numbers imply,
// and a comparison report reads back to both runs.
func TestCompareRatios(t *testing.T) {
	a := loadRun(t, KindCiphers)
	b := loadRun(t, KindCiphers)
	// b: the same machine, every cipher at its own multiple.
	var rep map[string]any
	json.Unmarshal(b.JSON, &rep)
	for i, c := range rep["ciphers"].([]any) {
		m := c.(map[string]any)
		for _, f := range []string{"encrypt_bps", "decrypt_bps", "mean_bps"} {
			m[f] = math.Round(m[f].(float64) * float64(i+1) / 4)
		}
	}
	js, _ := json.Marshal(rep)
	runs, err := Parse("slow.json", js)
	if err != nil {
		t.Fatal(err)
	}
	a.Label = "fast"
	c, err := Compare([]*Run{a, runs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Items) != len(a.Ciphers) {
		t.Fatalf("%d items, want %d", len(c.Items), len(a.Ciphers))
	}
	head, rows := c.Table()
	if want := []string{"", "fast", "slow", "slow / fast"}; !reflect.DeepEqual(head, want) {
		t.Errorf("head %q, want %q", head, want)
	}
	for i, x := range a.Ciphers {
		var y int64
		for _, z := range runs[0].Ciphers {
			if z.Name == x.Name {
				y = z.MeanBPS
			}
		}
		want := float64(y) / float64(x.MeanBPS)
		if got := c.Ratio(i, 1); !near(got, want) {
			t.Errorf("%s: ratio %g, want %g", x.Name, got, want)
		}
		if rows[i][3] != formatRatio(want) {
			t.Errorf("%s: table ratio %q, want %q", x.Name, rows[i][3], formatRatio(want))
		}
	}
	els := parseSVG(t, c.SVG())
	if got := bars(t, els); len(got) != 2*len(a.Ciphers) {
		t.Errorf("%d bars, want one per cipher and run (%d)", len(got), 2*len(a.Ciphers))
	}
	var page bytes.Buffer
	if err := WriteCompareHTML(&page, c); err != nil {
		t.Fatal(err)
	}
	assertNoFetch(t, page.String())
	back, err := Parse("cmp.html", page.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[0].Label != "fast" || back[1].Label != "slow" || !reflect.DeepEqual(back[1].Ciphers, runs[0].Ciphers) {
		t.Errorf("comparison report read back as %d runs %+v", len(back), back)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"enc":        `{"size": 1, "ciphers": [{"name": "aes-256-ctr", "encrypt_bps": 1, "decrypt_bps": 1}]}`,
		"garbage":    `{"nothing": true}`,
		"truncated":  `{"ciphers": [`,
		"html":       `<html><body>no results</body></html>`,
		"no ciphers": `{"cpu": "x", "ciphers": []}`,
	} {
		if _, err := Parse(name+".json", []byte(in)); !errors.Is(err, ErrInput) {
			t.Errorf("%s: error %v, want ErrInput", name, err)
		}
	}
	a, k := loadRun(t, KindCiphers), loadRun(t, KindKDF)
	if _, err := Compare([]*Run{a, k}); !errors.Is(err, ErrInput) {
		t.Errorf("ciphers vs kdf: %v, want ErrInput", err)
	}
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ max, want float64 }{{9.3, 2}, {100, 20}, {4321, 1000}, {0.07, 0.02}, {0, 1}} {
		if got := niceStep(c.max, 5); !near(got, c.want) {
			t.Errorf("niceStep(%g) = %g, want %g", c.max, got, c.want)
		}
	}
}

// TestCompareSameWithinSpread: where two runs' min–max ranges overlap the
// table says "same" (the difference is noise); where they are apart, the
// ratio. Runs without ranges (older reports) keep their ratios.
func TestCompareSameWithinSpread(t *testing.T) {
	withRanges := func(label string, scale func(i int) float64, spread float64) *Run {
		var rep map[string]any
		json.Unmarshal(loadRun(t, KindCiphers).JSON, &rep)
		for i, c := range rep["ciphers"].([]any) {
			m := c.(map[string]any)
			v := math.Round(m["mean_bps"].(float64) * scale(i))
			m["mean_bps"], m["median_bps"] = v, v
			m["min_bps"], m["max_bps"] = math.Round(v*(1-spread)), math.Round(v*(1+spread))
		}
		js, _ := json.Marshal(rep)
		runs, err := Parse(label+".json", js)
		if err != nil {
			t.Fatal(err)
		}
		return runs[0]
	}
	a := withRanges("one", func(int) float64 { return 1 }, 0.05)
	// The first cipher 4% faster (inside both 5% spreads), the others 1.5x.
	b := withRanges("two", func(i int) float64 {
		if i == 0 {
			return 1.04
		}
		return 1.5
	}, 0.05)
	c, err := Compare([]*Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	_, rows := c.Table()
	for i, row := range rows {
		want := "same"
		if i > 0 {
			want = formatRatio(1.5)
		}
		if row[3] != want {
			t.Errorf("%s: %q, want %q", row[0], row[3], want)
		}
	}
	// Without ranges in one run, no "same".
	c, _ = Compare([]*Run{loadRun(t, KindCiphers), b})
	if _, rows := c.Table(); rows[0][3] == "same" {
		t.Error("a run without ranges compared as same")
	}
}

// TestErrorBars: a run that reports ranges draws each mean's range as an
// error bar at exactly its min and max, and lists it in the table.
func TestErrorBars(t *testing.T) {
	var rep map[string]any
	json.Unmarshal(loadRun(t, KindCiphers).JSON, &rep)
	want := map[string][2]float64{}
	for _, c := range rep["ciphers"].([]any) {
		m := c.(map[string]any)
		v := m["mean_bps"].(float64)
		m["min_bps"], m["max_bps"] = math.Round(v*0.9), math.Round(v*1.2)
		want[m["name"].(string)] = [2]float64{math.Round(v*0.9) / mb, math.Round(v*1.2) / mb}
	}
	js, _ := json.Marshal(rep)
	runs, err := Parse("ranges.json", js)
	if err != nil {
		t.Fatal(err)
	}
	v := runs[0].ciphersView()
	n := 0
	for _, m := range regexp.MustCompile(`<g class="range" data-category="([^"]+)" data-series="Mean" data-min="([^"]+)" data-max="([^"]+)">`).FindAllStringSubmatch(v.svg, -1) {
		lo, _ := strconv.ParseFloat(m[2], 64)
		hi, _ := strconv.ParseFloat(m[3], 64)
		w, ok := want[html.UnescapeString(m[1])]
		if !ok || !near(lo, w[0]) || !near(hi, w[1]) {
			t.Errorf("%s: range %g–%g, want %v", m[1], lo, hi, w)
		}
		n++
	}
	if n != len(want) {
		t.Errorf("%d error bars, want %d", n, len(want))
	}
	if len(v.table.rows) == 0 || !strings.Contains(v.table.rows[0][4], "–") {
		t.Errorf("table rows %q lack the range", v.table.rows)
	}
}
