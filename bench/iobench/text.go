package iobench

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/cryptvol/cryptvol/internal/progress"
)

// The result as text, for `cryptvol benchmark io --format table|csv`.

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) }

// WriteCSV writes one row per pass and the overhead. The range columns
// come last: older readers of the first three keep working.
func (r *Result) WriteCSV(w io.Writer) error {
	c := csv.NewWriter(w)
	c.Write([]string{"pass", "write_bps", "read_bps", "write_min_bps", "write_max_bps", "read_min_bps", "read_max_bps"})
	row := func(name string, s Speed) {
		c.Write([]string{name, ftoa(s.WriteBPS), ftoa(s.ReadBPS), ftoa(s.WriteMinBPS), ftoa(s.WriteMaxBPS), ftoa(s.ReadMinBPS), ftoa(s.ReadMaxBPS)})
	}
	row("raw", r.Raw)
	row("encrypted", r.Encrypted)
	if r.Mount != nil {
		row("mount", *r.Mount)
	}
	c.Write([]string{"overhead_percent", ftoa(r.WriteOverhead), ftoa(r.ReadOverhead), "", "", "", ""})
	c.Flush()
	return c.Error()
}

// WriteTable writes what was measured and how, then each pass's write
// and read speed with its min–max, and the overhead.
func (r *Result) WriteTable(w io.Writer) {
	how := "a FUSE mount of its files (--via mount)"
	switch r.Via {
	case "api":
		how = "the Go API in this process (--via api)"
	case "webdav":
		how = "WebDAV on loopback, an HTTP PUT and GET of the file (--via webdav)"
	case "nfs":
		how = "NFSv3 on loopback, FILE_SYNC WRITEs and READs of the file (--via nfs)"
	}
	if r.Mount != nil {
		how += "; beside it the FUSE mount"
	}
	fmt.Fprintf(w, "Target: %s (%s); %s per pass in %s writes then fsync, read back from the disk; medians of %d runs (min–max)\n",
		r.Target, r.TargetKind, progress.FormatSize(r.Size), progress.FormatSize(int64(r.BlockSize)), r.Runs)
	fmt.Fprintf(w, "Encrypted: VeraCrypt volume, %s (XTS), %s, through %s; 1 MB = 2^20 bytes\n\n",
		r.Encryption, r.Filesystem, how)
	rate := func(bps float64) string { return progress.FormatRate(bps) + "/s" }
	pct := func(p float64) string { return strconv.FormatFloat(p, 'f', 0, 64) + "%" }
	span := func(lo, hi float64) string {
		return "(" + progress.FormatRate(lo) + " – " + progress.FormatRate(hi) + ")"
	}
	line := func(name string, s Speed) {
		fmt.Fprintf(w, "%-10s  %14s %-19s  %14s %s\n", name, rate(s.WriteBPS), span(s.WriteMinBPS, s.WriteMaxBPS), rate(s.ReadBPS), span(s.ReadMinBPS, s.ReadMaxBPS))
	}
	fmt.Fprintf(w, "%-10s  %14s %-19s  %14s\n", "", "Write (fsync)", "", "Read")
	line("Raw", r.Raw)
	encName := "Encrypted"
	switch r.Via {
	case "webdav":
		encName = "WebDAV"
	case "nfs":
		encName = "NFS"
	}
	line(encName, r.Encrypted)
	if r.Mount != nil {
		line("FUSE mount", *r.Mount)
	}
	fmt.Fprintf(w, "%-10s  %14s %-19s  %14s\n", "Overhead", pct(r.WriteOverhead), "", pct(r.ReadOverhead))
}
