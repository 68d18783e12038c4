package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cryptvol/cryptvol/bench"
)

// slowTryAfter is how long one benchmark try (an algorithm, a volume, a
// pass) may run before the user is told what it is: below it the
// progress count is enough, above it a silent wait looks like a hang (a
// 36-second Argon2id run said nothing, issue 28).
const slowTryAfter = 2 * time.Second

// tryNotice says on stderr what a slow try is doing. On a terminal the
// line appears once the try has lasted slowTryAfter (a timer, no
// polling) and is erased when the next try starts or done is called;
// with -v the same notice is one plain line, on a terminal or not (a log
// keeps it). Elsewhere it stays silent.
type tryNotice struct {
	w        io.Writer
	terminal bool // redraw in place, erase afterwards
	on       bool
	after    time.Duration

	mu    sync.Mutex
	timer *time.Timer
	shown bool
	gen   int // which try the pending timer belongs to
}

func (a *app) newTryNotice() *tryNotice {
	term := a.showProgress()
	return &tryNotice{w: a.stderr, terminal: term && !a.verbose, on: term || a.verbose, after: slowTryAfter}
}

// trying starts the clock of a new try named what.
func (n *tryNotice) trying(what string) {
	if !n.on {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.stopLocked()
	n.gen++
	gen := n.gen
	n.timer = time.AfterFunc(n.after, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if gen != n.gen { // a later try (or done) came first
			return
		}
		if n.terminal {
			fmt.Fprintf(n.w, "\r\x1b[Kstill measuring %s...", what)
		} else {
			fmt.Fprintf(n.w, "cryptvol: still measuring %s (over %v)\n", what, n.after)
		}
		n.shown = true
	})
}

// stopLocked cancels the pending notice and erases a shown one.
func (n *tryNotice) stopLocked() {
	if n.timer != nil {
		n.timer.Stop()
		n.timer = nil
	}
	if n.shown && n.terminal {
		fmt.Fprint(n.w, "\r\x1b[K")
	}
	n.shown = false
}

// done ends the last try.
func (n *tryNotice) done() {
	if !n.on {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gen++
	n.stopLocked()
}

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
