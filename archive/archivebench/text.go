package archivebench

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/cryptvol/cryptvol/bench"
	"github.com/cryptvol/cryptvol/internal/progress"
)

// The result as text: the tables and CSV of `cryptvol benchmark archive`
// (the JSON is the Result itself). The CSV columns are part of the
// command-line contract (docs/ARCHITECTURE.md); columns are only added.

// seconds is a time in a CSV cell.
func seconds(s float64) string { return strconv.FormatFloat(s, 'g', 6, 64) }

// duration prints seconds with a unit that keeps three digits or so.
func duration(s float64) string {
	switch {
	case s >= 1:
		return strconv.FormatFloat(s, 'f', 2, 64) + " s"
	case s >= 1e-3:
		return strconv.FormatFloat(s*1e3, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(s*1e6, 'f', 1, 64) + " µs"
}

// WriteCSV writes the comparison ("compare" rows, one per store) and the
// append scaling ("scaling" rows, one per store and size).
func (r *Result) WriteCSV(w io.Writer) error {
	c := csv.NewWriter(w)
	// The ranges come after the old columns (medians), which keep their
	// places.
	c.Write([]string{"section", "store", "entries", "add_one_seconds", "read_cold_seconds", "read_warm_seconds", "disk_bytes", "apparent_bytes", "append_seconds", "open_seconds",
		"min_add_one_seconds", "max_add_one_seconds", "min_read_cold_seconds", "max_read_cold_seconds", "min_read_warm_seconds", "max_read_warm_seconds",
		"min_append_seconds", "max_append_seconds"})
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return seconds(*p)
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	for _, s := range r.Stores {
		c.Write([]string{"compare", s.Store, strconv.Itoa(r.Files), seconds(s.AddOneSeconds), opt(s.ReadColdSeconds), seconds(s.ReadWarmSeconds),
			itoa(s.DiskBytes), itoa(s.ApparentBytes), "", "",
			seconds(s.MinAddOneSeconds), seconds(s.MaxAddOneSeconds), opt(s.MinReadColdSeconds), opt(s.MaxReadColdSeconds),
			seconds(s.MinReadWarmSeconds), seconds(s.MaxReadWarmSeconds), "", ""})
	}
	for _, s := range r.Scaling {
		c.Write([]string{"scaling", s.Store, strconv.Itoa(s.Entries), "", "", "", "", "", seconds(s.AppendSeconds), seconds(s.OpenSeconds),
			"", "", "", "", "", "", seconds(s.FastestSeconds), seconds(s.SlowestSeconds)})
	}
	c.Flush()
	return c.Error()
}

// SpreadWarnings are bench.SpreadWarning's warnings for the figures of
// the run whose min–max exceeds what a quiet machine gives: each store's
// add and reads, then each append-scaling figure.
func (r *Result) SpreadWarnings() []string {
	var out []string
	add := func(name string, median, lo, hi float64) {
		if s := bench.SpreadWarning(name, median, lo, hi); s != "" {
			out = append(out, s)
		}
	}
	for _, s := range r.Stores {
		add(s.Store+" add one", s.AddOneSeconds, s.MinAddOneSeconds, s.MaxAddOneSeconds)
		add(s.Store+" read all (warm)", s.ReadWarmSeconds, s.MinReadWarmSeconds, s.MaxReadWarmSeconds)
		if s.ReadColdSeconds != nil && s.MinReadColdSeconds != nil && s.MaxReadColdSeconds != nil {
			add(s.Store+" read all (cold)", *s.ReadColdSeconds, *s.MinReadColdSeconds, *s.MaxReadColdSeconds)
		}
	}
	for _, s := range r.Scaling {
		add(fmt.Sprintf("%s append at %d members", s.Store, s.Entries), s.AppendSeconds, s.FastestSeconds, s.SlowestSeconds)
	}
	return out
}

// WriteTable writes what was measured and how, the comparison of the
// stores (medians, then ranges), the archive's ratios to the others, and
// the append scaling.
func (r *Result) WriteTable(w io.Writer) {
	size := progress.FormatSize
	what := "JPEG thumbnails"
	if r.Content == "random" {
		what = "random bytes, which zip stores"
	}
	fmt.Fprintf(w, "%d files of %s to %s (%s in all; %s), in %s; medians of %d reads and of the adds (min–max below)\n",
		r.Files, size(int64(r.MinSize)), size(int64(r.MaxSize)), size(r.TotalBytes), what, r.Dir, r.Reps)
	fmt.Fprintln(w, "Adding one file syncs it (zip: rewrites the zip). Reading opens the store and reads every file, one core each, except")
	fmt.Fprintf(w, "archive: Walk decrypting on %d core(s); archive-1core: Walk on one; archive-1by1: ReadFile per member (one read each).\n", r.Threads)
	fmt.Fprintln(w, "The archives open with a key file (no Argon2id, which a password adds once per open).")
	disk := "on disk"
	if !r.DiskUsage {
		disk = "size (apparent)"
	}
	fmt.Fprintf(w, "\n%-12s  %12s  %16s  %16s  %16s\n", "store", "add one", "read all (cold)", "read all (warm)", disk)
	for _, s := range r.Stores {
		cold := "n/a"
		if s.ReadColdSeconds != nil {
			cold = duration(*s.ReadColdSeconds)
		}
		fmt.Fprintf(w, "%-12s  %12s  %16s  %16s  %16s\n", s.Store, duration(s.AddOneSeconds), cold, duration(s.ReadWarmSeconds), size(s.DiskBytes))
	}
	fmt.Fprintf(w, "\n%-12s  %23s  %23s  %23s\n", "min–max", "add one", "read all (cold)", "read all (warm)")
	span := func(lo, hi float64) string { return duration(lo) + " – " + duration(hi) }
	for _, s := range r.Stores {
		cold := "n/a"
		if s.MinReadColdSeconds != nil && s.MaxReadColdSeconds != nil {
			cold = span(*s.MinReadColdSeconds, *s.MaxReadColdSeconds)
		}
		fmt.Fprintf(w, "%-12s  %23s  %23s  %23s\n", s.Store, span(s.MinAddOneSeconds, s.MaxAddOneSeconds), cold, span(s.MinReadWarmSeconds, s.MaxReadWarmSeconds))
	}
	r.writeRatios(w)
	r.writeScaling(w)
}

// writeRatios compares the archive with each other store.
func (r *Result) writeRatios(w io.Writer) {
	ar := r.Store("archive")
	fmt.Fprintln(w)
	for _, o := range []string{"zip", "zip-store", "files"} {
		s := r.Store(o)
		if s == nil || ar == nil {
			continue
		}
		line := fmt.Sprintf("archive vs %s: reads all %.2fx as fast warm", o, s.ReadWarmSeconds/ar.ReadWarmSeconds)
		if one := r.Store("archive-1core"); one != nil {
			line += fmt.Sprintf(" (one core %.2fx)", s.ReadWarmSeconds/one.ReadWarmSeconds)
		}
		if s.ReadColdSeconds != nil && ar.ReadColdSeconds != nil {
			line += fmt.Sprintf(", %.2fx cold", *s.ReadColdSeconds / *ar.ReadColdSeconds)
		}
		line += fmt.Sprintf("; adds one %.2fx as fast; uses %.2fx the disk space", s.AddOneSeconds/ar.AddOneSeconds, float64(ar.DiskBytes)/float64(s.DiskBytes))
		fmt.Fprintln(w, line)
	}
}

// writeScaling is the table of one append's cost by the number of
// members, if the run measured it.
func (r *Result) writeScaling(w io.Writer) {
	if len(r.Scaling) == 0 {
		return
	}
	size, group := progress.FormatSize, progress.GroupDigits
	fmt.Fprintf(w, "\nAppending one file (median of the appends, taken in turn across the sizes):\n")
	fmt.Fprintln(w, "archive: Add+Commit on the open archive; no fsync: the same unsynced; reopen: open, add, commit, close;")
	fmt.Fprintln(w, "written/append: bytes one append writes, archive / zip")
	fmt.Fprintf(w, "%10s  %12s  %12s  %14s  %12s  %12s  %12s  %16s\n", "members", "archive", "no fsync", "archive-reopen", "zip", "archive open", "index memory", "written/append")
	var sizes []int
	for _, s := range r.Scaling {
		if s.Store == "archive" {
			sizes = append(sizes, s.Entries)
		}
	}
	get := func(store string, n int) float64 {
		if s := r.Scale(store, n); s != nil {
			return s.AppendSeconds
		}
		return 0
	}
	for _, n := range sizes {
		s := r.Scale("archive", n)
		zw := int64(0)
		if z := r.Scale("zip", n); z != nil {
			zw = z.BytesWritten
		}
		fmt.Fprintf(w, "%10s  %12s  %12s  %14s  %12s  %12s  %12s  %16s\n", group(int64(n)), duration(s.AppendSeconds),
			duration(get("archive-nosync", n)), duration(get("archive-reopen", n)), duration(get("zip", n)),
			duration(s.OpenSeconds), size(int64(s.IndexMemoryBytes)), size(s.BytesWritten)+" / "+size(zw))
	}
	if len(sizes) > 1 {
		lo, hi := sizes[0], sizes[len(sizes)-1]
		ratio := func(store string) float64 { return get(store, hi) / get(store, lo) }
		fmt.Fprintf(w, "%s vs %s members: archive append %.2fx the time (no fsync %.2fx), archive-reopen %.2fx, zip %.2fx\n",
			group(int64(hi)), group(int64(lo)), ratio("archive"), ratio("archive-nosync"), ratio("archive-reopen"), ratio("zip"))
	}
}
