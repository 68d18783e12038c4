package chart

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ioRun is the io fixture with hand-made ranges: each figure's min and max
// at lo and hi times its median, and the medians scaled by scale.
func ioRun(t *testing.T, label string, scale, lo, hi float64) *Run {
	t.Helper()
	var rep map[string]any
	if err := json.Unmarshal(loadRun(t, KindIO).JSON, &rep); err != nil {
		t.Fatal(err)
	}
	for _, pass := range []string{"raw", "encrypted"} {
		m := rep[pass].(map[string]any)
		for _, d := range []string{"write", "read"} {
			v := m[d+"_bps"].(float64) * scale
			m[d+"_bps"], m[d+"_min_bps"], m[d+"_max_bps"] = v, v*lo, v*hi
		}
	}
	js, _ := json.Marshal(rep)
	runs, err := Parse(label+".json", js)
	if err != nil {
		t.Fatal(err)
	}
	return runs[0]
}

// TestIOErrorBars: an io run that reports ranges draws one error bar per
// bar (raw and encrypted, write and read) at its min and max, and its
// table gives the ranges; the old fixture (no ranges) draws none.
func TestIOErrorBars(t *testing.T) {
	r := ioRun(t, "ranged", 1, 0.9, 1.1)
	doc, err := SVG(r)
	if err != nil {
		t.Fatal(err)
	}
	parseSVG(t, doc) // well-formed
	bars := regexp.MustCompile(`<g class="range" data-category="([^"]+)" data-series="([^"]+)" data-min="([^"]+)" data-max="([^"]+)">`).FindAllStringSubmatch(doc, -1)
	if len(bars) != 4 {
		t.Fatalf("%d error bars, want 4 (raw and encrypted, write and read)", len(bars))
	}
	want := map[string]float64{"Write (fsync)/Raw": r.IO.Raw.WriteMinBPS / mb, "Read/Encrypted": r.IO.Encrypted.ReadMinBPS / mb}
	for _, b := range bars {
		lo, _ := strconv.ParseFloat(b[3], 64)
		if w, ok := want[b[1]+"/"+b[2]]; ok && !near(lo, w) {
			t.Errorf("%s/%s: min %g, want %g", b[1], b[2], lo, w)
		}
	}
	if v := r.ioView(); !strings.Contains(v.table.rows[0][1], "–") {
		t.Errorf("io table row %q lacks the range", v.table.rows[0])
	}
	old, err := SVG(loadRun(t, KindIO))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(old, `class="range"`) {
		t.Error("a run without ranges drew error bars")
	}
}

// TestIOCompareSame: compare's rule on io runs: medians 5% apart whose
// ranges (±10%) overlap are "same"; 1.5x apart with ±5% ranges are a ratio.
func TestIOCompareSame(t *testing.T) {
	a := ioRun(t, "a", 1, 0.9, 1.1)
	c, err := Compare([]*Run{a, ioRun(t, "b", 1.05, 0.9, 1.1)})
	if err != nil {
		t.Fatal(err)
	}
	_, rows := c.Table()
	for _, row := range rows {
		if row[3] != "same" {
			t.Errorf("%s: %q, want same", row[0], row[3])
		}
	}
	c, _ = Compare([]*Run{ioRun(t, "a", 1, 0.95, 1.05), ioRun(t, "c", 1.5, 0.95, 1.05)})
	_, rows = c.Table()
	for _, row := range rows {
		if row[3] != "1.50x" {
			t.Errorf("%s: %q, want 1.50x", row[0], row[3])
		}
	}
}
