package bench

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// signalWriter records what is written and signals each write.
type signalWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestTryNotice: a try that outlasts the delay is named (in place on a
// terminal, as a line under -v); one that ends first is not; an
// inactive notice (no terminal, no -v) writes nothing.
func TestTryNotice(t *testing.T) {
	for _, terminal := range []bool{true, false} {
		w := &signalWriter{wrote: make(chan struct{}, 1)}
		n := &TryNotice{w: w, terminal: terminal, on: true, after: time.Millisecond}
		n.Trying("Argon2id")
		<-w.wrote // the timer fired: no sleep, no wall-time assertion
		n.Done()
		got := w.String()
		if !strings.Contains(got, "still measuring Argon2id") {
			t.Errorf("terminal=%v: %q does not name the try", terminal, got)
		}
		if terminal && !strings.HasSuffix(got, "\r\x1b[K") {
			t.Errorf("terminal: %q: the notice is not erased at the end", got)
		}
		if !terminal && (strings.Contains(got, "\r") || !strings.HasSuffix(got, "\n")) {
			t.Errorf("-v: %q is not one plain line", got)
		}
	}
	// A try that ends before the delay says nothing.
	w := &signalWriter{wrote: make(chan struct{}, 1)}
	n := &TryNotice{w: w, terminal: true, on: true, after: time.Hour}
	n.Trying("AES")
	n.Trying("Serpent")
	n.Done()
	if got := w.String(); got != "" {
		t.Errorf("fast tries wrote %q", got)
	}
	// Off: nothing at all, even for a slow try.
	w = &signalWriter{wrote: make(chan struct{}, 1)}
	n = &TryNotice{w: w, after: time.Nanosecond}
	n.Trying("Whirlpool")
	n.Done()
	if got := w.String(); got != "" {
		t.Errorf("an inactive notice wrote %q", got)
	}
}
