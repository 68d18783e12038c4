package main

import (
	"encoding/json"
	"math"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdCheckRatios is the script command `checkratios CMP A B...`: CMP is
// `benchmark compare A B... --format json`; every ratio in it must be the
// cipher's mean speed in that run over its mean speed in A, recomputed
// here from the files themselves.
func cmdCheckRatios(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 3 {
		ts.Fatalf("usage: checkratios CMP A B...")
	}
	var cmp struct {
		Items []struct {
			Name   string     `json:"name"`
			Ratios []*float64 `json:"ratios"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &cmp); err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	means := make([]map[string]float64, 0, len(args)-1)
	for _, name := range args[1:] {
		var run struct {
			Ciphers []struct {
				Name    string  `json:"name"`
				MeanBPS float64 `json:"mean_bps"`
			} `json:"ciphers"`
		}
		if err := json.Unmarshal([]byte(ts.ReadFile(name)), &run); err != nil {
			ts.Fatalf("%s: %v", name, err)
		}
		m := map[string]float64{}
		for _, c := range run.Ciphers {
			m[c.Name] = c.MeanBPS
		}
		means = append(means, m)
	}
	if len(cmp.Items) != len(means[0]) {
		ts.Fatalf("%d items compared, %s has %d ciphers", len(cmp.Items), args[1], len(means[0]))
	}
	for _, it := range cmp.Items {
		if len(it.Ratios) != len(means) {
			ts.Fatalf("%s: %d ratios for %d runs", it.Name, len(it.Ratios), len(means))
		}
		for r, got := range it.Ratios {
			want := means[r][it.Name] / means[0][it.Name]
			if got == nil || math.Abs(*got-want) > 1e-9*want {
				ts.Fatalf("%s, run %d: ratio %v, the files imply %g", it.Name, r+1, got, want)
			}
		}
		ts.Logf("%s: %s / %s = %.3f", it.Name, args[2], args[1], *it.Ratios[1])
	}
}
