package fatcore

import (
	"fmt"
	"strings"
)

// ReportText is the text of a check report, one finding per line, as
// fat's and exfat's CheckReport.String write it: a count of files and
// directories first, then each finding that is there.
type ReportText struct{ b strings.Builder }

// NewReportText starts a report on a tree of files and dirs.
func NewReportText(files, dirs int) *ReportText {
	t := &ReportText{}
	fmt.Fprintf(&t.b, "%d files, %d directories\n", files, dirs)
	return t
}

// Flag adds line when set.
func (t *ReportText) Flag(set bool, line string) {
	if set {
		t.b.WriteString(line + "\n")
	}
}

// Count adds format (with n for its verb) when n is not zero.
func (t *ReportText) Count(n uint64, format string) {
	if n != 0 {
		fmt.Fprintf(&t.b, format+"\n", n)
	}
}

// Each adds "label: item" for each item.
func (t *ReportText) Each(label string, items []string) {
	for _, s := range items {
		fmt.Fprintf(&t.b, "%s: %s\n", label, s)
	}
}

// Line adds a line as it is.
func (t *ReportText) Line(line string) { t.b.WriteString(line + "\n") }

func (t *ReportText) String() string { return t.b.String() }
