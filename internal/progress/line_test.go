package progress

import (
	"bytes"
	"strings"
	"testing"
)

// screen is what a terminal shows of one line after w's bytes: a '\r'
// moves back to the start and what follows overwrites.
func screen(w string) string {
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

// TestProgressLineNoStrayCharacters: benchmark io's phases have labels of
// different lengths; a shorter one must not leave the tail of the one
// before on the screen, and done leaves the line blank.
func TestLineNoStrayCharacters(t *testing.T) {
	var buf bytes.Buffer
	p := &Line{w: &buf, label: "Benchmarking I/O: writing the encrypted volume", on: true}
	p.Update(0, 1)
	p.SetLabel("Benchmarking I/O: raw")
	p.Update(0, 1)
	if got, want := strings.TrimRight(screen(buf.String()), " "), "Benchmarking I/O: raw: 0/1"; got != want {
		t.Errorf("screen shows %q, want %q", got, want)
	}
	p.Done()
	if got := strings.TrimSpace(screen(buf.String())); got != "" {
		t.Errorf("after done the line shows %q, want it blank", got)
	}
}
