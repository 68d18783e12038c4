package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/archive/archivebench"
	"github.com/cryptvol/cryptvol/bench"
)

// `cryptvol benchmark archive`: the comparison behind the archive — many
// small files as plain files, in a zip and in the archive — measured in one
// run by package archivebench.

// archiveBenchFlags are the kind's own options; their names carry the
// kind so they cannot clash with another kind's flags in the shared set.
type archiveBenchFlags struct {
	files   int
	dir     string
	sizes   string
	appends int
	reps    int
	minSize string
	maxSize string
	content string
}

var archiveBench archiveBenchFlags

func init() {
	registerBenchmark("archive", &benchmarkKind{
		summary: "many small files as plain files, in a zip and in the archive: add one, read all (cold and warm), disk use, append scaling",
		flags: func(fs *pflag.FlagSet) {
			fs.IntVar(&archiveBench.files, "archive-files", 500, "archive: number of files compared")
			fs.StringVar(&archiveBench.minSize, "archive-min-size", "3K", "archive: smallest file")
			fs.StringVar(&archiveBench.maxSize, "archive-max-size", "10K", "archive: largest file")
			fs.StringVar(&archiveBench.content, "archive-content", "jpeg", "archive: `KIND` of files: jpeg (thumbnails; sizes approximate, at most 1M) or random (bytes: the best case for zip, which stores them)")
			fs.StringVar(&archiveBench.dir, "archive-dir", "", "archive: `DIR` to work in (default: the temporary directory); its disk is what is measured")
			fs.StringVar(&archiveBench.sizes, "archive-sizes", "1000,100000", "archive: member counts for the append-scaling test (none to skip)")
			fs.IntVar(&archiveBench.appends, "archive-appends", 15, "archive: appends timed per size")
			fs.IntVar(&archiveBench.reps, "archive-reps", 5, "archive: repetitions of each read (the median counts, with min–max)")
		},
		run: runBenchArchive,
	})
}

func runBenchArchive(ctx context.Context, a *app, bf *benchFlags, args []string) error {
	if len(args) > 0 {
		return usageError(fmt.Errorf("unexpected argument %q", args[0]))
	}
	for _, f := range []string{"buffer", "threads", "algorithms", "time", "pim", "argon2-full"} {
		if bf.fs.Changed(f) {
			return usageError(fmt.Errorf("--%s does not apply to the archive benchmark", f))
		}
	}
	switch bf.format {
	case "table", "csv", "json":
	default:
		return formatError(bf.format, false)
	}
	o := archivebench.Options{Dir: archiveBench.dir, Files: archiveBench.files, Reps: archiveBench.reps, Appends: archiveBench.appends, Content: archiveBench.content}
	if o.Content != "jpeg" && o.Content != "random" {
		return usageError(fmt.Errorf("--archive-content %q: want jpeg or random", o.Content))
	}
	minSize, err := parseSize(archiveBench.minSize)
	if err != nil {
		return usageError(fmt.Errorf("--archive-min-size: %v", err))
	}
	maxSize, err := parseSize(archiveBench.maxSize)
	if err != nil {
		return usageError(fmt.Errorf("--archive-max-size: %v", err))
	}
	if minSize > maxSize || maxSize > 64<<20 || minSize == 0 && maxSize == 0 {
		return usageError(fmt.Errorf("--archive-min-size %s, --archive-max-size %s: want 0 < min <= max <= 64M", archiveBench.minSize, archiveBench.maxSize))
	}
	if o.Content == "jpeg" && maxSize > 1<<20 {
		return usageError(fmt.Errorf("--archive-max-size %s: JPEG thumbnails are at most 1M; use --archive-content random", archiveBench.maxSize))
	}
	o.MinSize, o.MaxSize = int(minSize), int(maxSize)
	o.Sizes = []int{}
	if s := strings.TrimSpace(archiveBench.sizes); s != "" && s != "none" {
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(f), "_", ""))
			if err != nil || n < 1 {
				return usageError(fmt.Errorf("--archive-sizes %q: want a comma-separated list of member counts, or none", archiveBench.sizes))
			}
			o.Sizes = append(o.Sizes, n)
		}
	}
	if o.Files < 1 || o.Reps < 1 || o.Appends < 1 {
		return usageError(errors.New("--archive-files, --archive-reps and --archive-appends must be at least 1"))
	}
	line := newProgressLine(a.stderr, "Benchmarking the archive")
	stage := 0
	notice := a.newTryNotice()
	o.Progress = func(s string) {
		notice.trying(s)
		stage++
		line.label = "Benchmarking the archive: " + s
		line.update(stage, stage)
	}
	watch := bench.StartWatch()
	res, err := archivebench.Run(ctx, o)
	notice.done()
	line.done()
	if err != nil {
		return err
	}
	var figs []figure
	for _, s := range res.Stores {
		figs = append(figs, figure{s.Store + " add one", s.AddOneSeconds, s.MinAddOneSeconds, s.MaxAddOneSeconds},
			figure{s.Store + " read all (warm)", s.ReadWarmSeconds, s.MinReadWarmSeconds, s.MaxReadWarmSeconds})
		if s.ReadColdSeconds != nil && s.MinReadColdSeconds != nil && s.MaxReadColdSeconds != nil {
			figs = append(figs, figure{s.Store + " read all (cold)", *s.ReadColdSeconds, *s.MinReadColdSeconds, *s.MaxReadColdSeconds})
		}
	}
	for _, s := range res.Scaling {
		figs = append(figs, figure{fmt.Sprintf("%s append at %d members", s.Store, s.Entries), s.AppendSeconds, s.FastestSeconds, s.SlowestSeconds})
	}
	defer warnRun(a, watch, figs)
	switch bf.format {
	case "json":
		return writeJSON(a.stdout, res)
	case "csv":
		w := csv.NewWriter(a.stdout)
		// The ranges come after the old columns (medians), which keep
		// their places.
		w.Write([]string{"section", "store", "entries", "add_one_seconds", "read_cold_seconds", "read_warm_seconds", "disk_bytes", "apparent_bytes", "append_seconds", "open_seconds",
			"min_add_one_seconds", "max_add_one_seconds", "min_read_cold_seconds", "max_read_cold_seconds", "min_read_warm_seconds", "max_read_warm_seconds",
			"min_append_seconds", "max_append_seconds"})
		opt := func(p *float64) string {
			if p == nil {
				return ""
			}
			return fmtSec(*p)
		}
		for _, s := range res.Stores {
			w.Write([]string{"compare", s.Store, strconv.Itoa(res.Files), fmtSec(s.AddOneSeconds), opt(s.ReadColdSeconds), fmtSec(s.ReadWarmSeconds),
				itoa(s.DiskBytes), itoa(s.ApparentBytes), "", "",
				fmtSec(s.MinAddOneSeconds), fmtSec(s.MaxAddOneSeconds), opt(s.MinReadColdSeconds), opt(s.MaxReadColdSeconds),
				fmtSec(s.MinReadWarmSeconds), fmtSec(s.MaxReadWarmSeconds), "", ""})
		}
		for _, s := range res.Scaling {
			w.Write([]string{"scaling", s.Store, strconv.Itoa(s.Entries), "", "", "", "", "", fmtSec(s.AppendSeconds), fmtSec(s.OpenSeconds),
				"", "", "", "", "", "", fmtSec(s.FastestSeconds), fmtSec(s.SlowestSeconds)})
		}
		w.Flush()
		return w.Error()
	}
	printArchiveBench(a, res)
	return nil
}

func fmtSec(s float64) string { return strconv.FormatFloat(s, 'g', 6, 64) }

// fmtDur prints seconds with a unit that keeps three digits or so.
func fmtDur(s float64) string {
	switch {
	case s >= 1:
		return strconv.FormatFloat(s, 'f', 2, 64) + " s"
	case s >= 1e-3:
		return strconv.FormatFloat(s*1e3, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(s*1e6, 'f', 1, 64) + " µs"
}

func printArchiveBench(a *app, r *archivebench.Result) {
	w := a.stdout
	what := "JPEG thumbnails"
	if r.Content == "random" {
		what = "random bytes, which zip stores"
	}
	fmt.Fprintf(w, "%d files of %s to %s (%s in all; %s), in %s; medians of %d reads and of the adds (min–max below)\n",
		r.Files, humanSize(int64(r.MinSize)), humanSize(int64(r.MaxSize)), humanSize(r.TotalBytes), what, r.Dir, r.Reps)
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
			cold = fmtDur(*s.ReadColdSeconds)
		}
		fmt.Fprintf(w, "%-12s  %12s  %16s  %16s  %16s\n", s.Store, fmtDur(s.AddOneSeconds), cold, fmtDur(s.ReadWarmSeconds), humanSize(s.DiskBytes))
	}
	fmt.Fprintf(w, "\n%-12s  %23s  %23s  %23s\n", "min–max", "add one", "read all (cold)", "read all (warm)")
	span := func(lo, hi float64) string { return fmtDur(lo) + " – " + fmtDur(hi) }
	for _, s := range r.Stores {
		cold := "n/a"
		if s.MinReadColdSeconds != nil && s.MaxReadColdSeconds != nil {
			cold = span(*s.MinReadColdSeconds, *s.MaxReadColdSeconds)
		}
		fmt.Fprintf(w, "%-12s  %23s  %23s  %23s\n", s.Store, span(s.MinAddOneSeconds, s.MaxAddOneSeconds), cold, span(s.MinReadWarmSeconds, s.MaxReadWarmSeconds))
	}
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
	if len(r.Scaling) == 0 {
		return
	}
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
		fmt.Fprintf(w, "%10s  %12s  %12s  %14s  %12s  %12s  %12s  %16s\n", groupDigits(int64(n)), fmtDur(s.AppendSeconds),
			fmtDur(get("archive-nosync", n)), fmtDur(get("archive-reopen", n)), fmtDur(get("zip", n)),
			fmtDur(s.OpenSeconds), humanSize(int64(s.IndexMemoryBytes)), humanSize(s.BytesWritten)+" / "+humanSize(zw))
	}
	if len(sizes) > 1 {
		lo, hi := sizes[0], sizes[len(sizes)-1]
		ratio := func(store string) float64 { return get(store, hi) / get(store, lo) }
		fmt.Fprintf(w, "%s vs %s members: archive append %.2fx the time (no fsync %.2fx), archive-reopen %.2fx, zip %.2fx\n",
			groupDigits(int64(hi)), groupDigits(int64(lo)), ratio("archive"), ratio("archive-nosync"), ratio("archive-reopen"), ratio("zip"))
	}
}
