package bench_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/bench"
	"github.com/cryptvol/cryptvol/bench/chart"
)

// run is a synthetic cipher run with one row per figure.
func run(rows map[string]bench.Figure) bench.Report {
	r := bench.Report{}
	for name, f := range rows {
		r.Ciphers = append(r.Ciphers, bench.CipherResult{Name: name, Mode: "xts", SectorSize: 512,
			EncryptBPS: int64(f.Median), DecryptBPS: int64(f.Median), MeanBPS: int64(f.Median),
			MedianBPS: int64(f.Median), MinBPS: int64(f.Min), MaxBPS: int64(f.Max), Samples: 21})
	}
	return r
}

// notSame is what `benchmark compare --format json` of a against b says is
// not "same", read back as .ci/bench-trust reads it.
func notSame(t *testing.T, a, b bench.Report) []string {
	t.Helper()
	var runs []*chart.Run
	for _, r := range []bench.Report{a, b} {
		js, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		cr, err := chart.FromJSON(js)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, cr)
	}
	c, err := chart.Compare(runs)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := c.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	ns, err := chart.NotSame(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// TestAgreementCanFail proves the acceptance check of .ci/bench-trust can
// fail: two runs whose AES figures lie outside each other's ranges are
// flagged both ways and compare gives them a ratio; Serpent, whose medians
// lie inside the other's range, passes and is "same"; a row one run lacks
// is flagged.
func TestAgreementCanFail(t *testing.T) {
	a := run(map[string]bench.Figure{"AES": {1000, 950, 1050}, "Serpent": {300, 250, 350}})
	b := run(map[string]bench.Figure{"AES": {2000, 1900, 2100}, "Serpent": {320, 240, 360}})

	var got []string
	for _, d := range bench.Disagreements([]bench.Report{a, b}) {
		got = append(got, d.String())
	}
	want := []string{
		"AES: the median of run 1, 1000, is outside run 2's range 1900 – 2100 (by 47.4%)",
		"AES: the median of run 2, 2000, is outside run 1's range 950 – 1050 (by 90.5%)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("disagreements:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ns := notSame(t, a, b); len(ns) != 1 || !strings.HasPrefix(ns[0], "AES: ") || !strings.HasSuffix(ns[0], " 2.00x") {
		t.Errorf("compare: not same %q, want AES alone at 2.00x", ns)
	}

	// Inside each other's ranges: nothing to flag, and compare says same.
	b = run(map[string]bench.Figure{"AES": {1040, 990, 1100}, "Serpent": {320, 240, 360}})
	if ds := bench.Disagreements([]bench.Report{a, b, a}); len(ds) != 0 {
		t.Errorf("runs within each other's ranges flagged: %v", ds)
	}
	if ns := notSame(t, a, b); len(ns) != 0 {
		t.Errorf("compare: not same %q, want every row same", ns)
	}

	// A row one run lacks is no agreement.
	c := run(map[string]bench.Figure{"AES": {1000, 950, 1050}})
	if ds := bench.Disagreements([]bench.Report{a, c}); len(ds) != 1 || !ds[0].Missing || ds[0].Name != "Serpent" {
		t.Errorf("missing row: %v", ds)
	}
}
