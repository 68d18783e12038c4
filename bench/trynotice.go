package bench

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// slowTryAfter is how long one benchmark try (an algorithm, a volume, a
// pass) may run before the user is told what it is: below it the
// progress count is enough, above it a silent wait looks like a hang (a
// 36-second Argon2id run said nothing, issue 28).
const slowTryAfter = 2 * time.Second

// TryNotice says on stderr what a slow try is doing. On a terminal the
// line appears once the try has lasted slowTryAfter (a timer, no
// polling) and is erased when the next try starts or Done is called;
// with -v the same notice is one plain line, on a terminal or not (a log
// keeps it). Elsewhere it stays silent.
type TryNotice struct {
	w        io.Writer
	terminal bool // redraw in place, erase afterwards
	on       bool
	after    time.Duration

	mu    sync.Mutex
	timer *time.Timer
	shown bool
	gen   int // which try the pending timer belongs to
}

// NewTryNotice returns the notice for w: terminal says w is a terminal
// that shows progress, verbose that -v asked for the plain line.
func NewTryNotice(w io.Writer, terminal, verbose bool) *TryNotice {
	return &TryNotice{w: w, terminal: terminal && !verbose, on: terminal || verbose, after: slowTryAfter}
}

// Trying starts the clock of a new try named what.
func (n *TryNotice) Trying(what string) {
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
func (n *TryNotice) stopLocked() {
	if n.timer != nil {
		n.timer.Stop()
		n.timer = nil
	}
	if n.shown && n.terminal {
		fmt.Fprint(n.w, "\r\x1b[K")
	}
	n.shown = false
}

// Done ends the last try.
func (n *TryNotice) Done() {
	if !n.on {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gen++
	n.stopLocked()
}
