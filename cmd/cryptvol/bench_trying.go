package main

import (
	"io"

	"github.com/cryptvol/cryptvol/bench"
	"github.com/cryptvol/cryptvol/internal/progress"
)

// tryNotice and progressLine are bench.TryNotice and progress.Line for
// the callbacks of cmd_benchmark_archive.go, their last user; the other
// benchmark kinds call bench.NewTryNotice and progress.NewLine directly.
// They go when that file does the same.
type tryNotice struct{ *bench.TryNotice }

func (a *app) newTryNotice() tryNotice {
	return tryNotice{bench.NewTryNotice(a.stderr, a.showProgress(), a.verbose)}
}
func (n tryNotice) trying(what string) { n.Trying(what) }
func (n tryNotice) done()              { n.Done() }

// progressLine's label, when a phase changes it, is drawn by the next
// update.
type progressLine struct {
	*progress.Line
	label string
}

func newProgressLine(w io.Writer, label string) *progressLine {
	return &progressLine{progress.NewLine(w, label), label}
}
func (p *progressLine) update(done, total int) { p.SetLabel(p.label); p.Update(done, total) }
func (p *progressLine) done()                  { p.Done() }

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
