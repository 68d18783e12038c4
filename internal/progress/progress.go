// Package progress draws a one-line progress bar (percent, MB/s, time left)
// on a terminal. Libraries take a plain callback; only the CLI draws.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Bar is a progress line for an operation of known size.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	total int64
	done  int64
	start time.Time
	// first is when the first progress came and firstDone how much it
	// said: speed is measured from there, so the work before the first
	// step (a key derivation) does not count.
	first     time.Time
	firstDone int64
	// now is the clock (a fake one in tests).
	now     func() time.Time
	drawn   time.Time
	enabled bool
	width   int
}

// New starts a bar. When enabled is false (output is not a terminal) the bar
// draws nothing, but still measures the speed for Finish.
func New(w io.Writer, label string, total int64, enabled bool) *Bar {
	return &Bar{w: w, label: label, total: total, start: time.Now(), enabled: enabled, now: time.Now}
}

// Set records progress and redraws at most ten times a second.
func (b *Bar) Set(done int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.first.IsZero() {
		b.first, b.firstDone = now, done
	}
	b.done = done
	if !b.enabled {
		return
	}
	if now.Sub(b.drawn) < 100*time.Millisecond && done < b.total {
		return
	}
	b.drawn = now
	b.draw(now)
}

// Add records n more bytes done.
func (b *Bar) Add(n int64) {
	b.mu.Lock()
	d := b.done + n
	b.mu.Unlock()
	b.Set(d)
}

func (b *Bar) draw(now time.Time) {
	pct := 100.0
	if b.total > 0 {
		pct = float64(b.done) * 100 / float64(b.total)
	}
	speed := b.speed(now)
	left := "--:--"
	if speed > 0 && b.total > b.done {
		left = fmtDuration(time.Duration(float64(b.total-b.done) / speed * float64(time.Second)))
	}
	line := fmt.Sprintf("%s %5.1f%%  %s/s  left %s", b.label, pct, FormatRate(speed), left)
	pad := ""
	if n := b.width - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	b.width = len(line)
	fmt.Fprintf(b.w, "\r%s%s", line, pad)
}

// Finish erases the line and returns the average speed in bytes per second.
func (b *Bar) Finish() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	speed := b.speed(b.now())
	if b.enabled && b.width > 0 {
		// Erase the line, so the caller's summary ("Done ...") is not
		// printed beside a stale percentage.
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", b.width))
		b.width = 0
	}
	return speed
}

// speed is bytes per second from the first progress step to now (or, when
// everything came in one step, from New).
func (b *Bar) speed(now time.Time) float64 {
	el, done := now.Sub(b.first).Seconds(), b.done-b.firstDone
	if b.first.IsZero() || done <= 0 || el <= 0 {
		el, done = now.Sub(b.start).Seconds(), b.done
	}
	if el <= 0 {
		return 0
	}
	return float64(done) / el
}

// FormatRate prints bytes per second the way TrueCrypt's benchmark does:
// binary units (1 MB = 2^20 bytes) under decimal names, so the figures
// compare directly with the tables people post.
func FormatRate(bps float64) string {
	const mib = 1 << 20
	switch {
	case bps >= 1<<30:
		return fmt.Sprintf("%.2f GB", bps/(1<<30))
	case bps >= mib:
		return fmt.Sprintf("%.1f MB", bps/mib)
	default:
		return fmt.Sprintf("%.1f KB", bps/1024)
	}
}

func fmtDuration(d time.Duration) string {
	s := int(d.Seconds() + 0.5)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
