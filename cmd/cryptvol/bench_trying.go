package main

import (
	"github.com/cryptvol/cryptvol/bench"
)

// tryNotice is bench.TryNotice for the benchmark kinds' callbacks.
type tryNotice struct{ *bench.TryNotice }

func (a *app) newTryNotice() tryNotice {
	return tryNotice{bench.NewTryNotice(a.stderr, a.showProgress(), a.verbose)}
}
func (n tryNotice) trying(what string) { n.Trying(what) }
func (n tryNotice) done()              { n.Done() }

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
