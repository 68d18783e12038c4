package main

import (
	"github.com/cryptvol/cryptvol/bench"
)

// figure is one reported median with its range, for the spread warning.
type figure struct {
	name           string
	median, lo, hi float64
}

// warnRun prints, on stderr, what made a run of io, enc, matrix or
// archive less trustworthy: a busy machine (load average, CPU steal) and
// every figure whose min–max exceeds 10% of its median, as ciphers and
// kdf do through bench.Report.Finish.
func warnRun(a *app, w *bench.Watch, figs []figure) {
	for _, s := range w.Warnings() {
		a.warnf("%s", s)
	}
	for _, f := range figs {
		if s := bench.SpreadWarning(f.name, f.median, f.lo, f.hi); s != "" {
			a.warnf("%s", s)
		}
	}
}
