package progress

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// Line shows "label: done/total" on a terminal, redrawn in place, and
// nothing elsewhere (so redirected output stays clean). Its Update fits
// the Progress callbacks of bench's options.
type Line struct {
	w     io.Writer
	label string
	on    bool
	width int
}

// NewLine returns a Line for w, drawing only when w is a terminal.
func NewLine(w io.Writer, label string) *Line {
	f, ok := w.(*os.File)
	return &Line{w: w, label: label, on: ok && term.IsTerminal(int(f.Fd()))}
}

// SetLabel changes the label the next Update draws (a run's phases).
func (p *Line) SetLabel(label string) { p.label = label }

// Update redraws the line with done of total.
func (p *Line) Update(done, total int) {
	if !p.on {
		return
	}
	s := fmt.Sprintf("%s: %d/%d", p.label, done, total)
	// Blank out what a longer line before left (a phase's label may
	// be shorter than the one before it).
	pad := strings.Repeat(" ", max(0, p.width-len(s)))
	p.width = len(s)
	fmt.Fprintf(p.w, "\r%s%s", s, pad)
}

// Done erases the line.
func (p *Line) Done() {
	if p.on && p.width > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	}
}
