package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeClock returns the times it is set to.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// lastLine is what a terminal shows of the current line: each '\r'
// returns to its start and what follows overwrites.
func lastLine(w string) string {
	var line []byte
	col := 0
	for i := 0; i < len(w); i++ {
		switch c := w[i]; c {
		case '\r':
			col = 0
		case '\n':
			line, col = nil, 0
		default:
			if col < len(line) {
				line[col] = c
			} else {
				line = append(line, c)
			}
			col++
		}
	}
	return string(line)
}

// TestFinishErasesAndSpeedSkipsTheWaitBefore: Finish leaves a blank line
// (no "Creating 95.0%" beside the caller's "Done"), and the speed counts
// from the first progress step, not from New (the key derivation before
// it is not writing).
func TestFinishErasesAndSpeedSkipsTheWaitBefore(t *testing.T) {
	var buf bytes.Buffer
	clk := &fakeClock{t: time.Unix(1000, 0)}
	b := New(&buf, "Creating", 100<<20, true)
	b.now, b.start = clk.now, clk.t
	clk.t = clk.t.Add(3 * time.Second) // the key derivation
	b.Set(10 << 20)
	clk.t = clk.t.Add(time.Second)
	b.Set(95 << 20)
	if got := lastLine(buf.String()); !strings.HasPrefix(got, "Creating  95.0%") {
		t.Errorf("line shows %q", got)
	}
	clk.t = clk.t.Add(time.Second)
	b.Set(100 << 20)
	speed := b.Finish()
	if got := strings.TrimSpace(lastLine(buf.String())); got != "" {
		t.Errorf("after Finish the line shows %q, want it blank", got)
	}
	if want := float64(90<<20) / 2; speed != want {
		t.Errorf("speed %.0f B/s, want %.0f (90 MiB in the 2 s after the first step)", speed, want)
	}
}

// TestSpeedOneStep: everything reported at once falls back to the time
// from New.
func TestSpeedOneStep(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	b := New(&bytes.Buffer{}, "x", 8, false)
	b.now, b.start = clk.now, clk.t
	clk.t = clk.t.Add(2 * time.Second)
	b.Set(8)
	if got := b.Finish(); got != 4 {
		t.Errorf("speed %v, want 4", got)
	}
}
