package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/archive/archivebench"
	"github.com/cryptvol/cryptvol/bench"
	"github.com/cryptvol/cryptvol/internal/progress"
)

// `cryptvol benchmark archive`: the comparison behind the archive — many
// small files as plain files, in a zip and in the archive — measured in one
// run, and written as a table or CSV, by package archivebench; this checks
// the options and shows the progress.

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
	if f := bf.format; f != "table" && f != "csv" && f != "json" {
		return formatError(f, false)
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
	if o.Sizes, err = archivebench.ParseSizes(archiveBench.sizes); err != nil {
		return usageError(fmt.Errorf("--archive-sizes %q: want a comma-separated list of member counts, or none", archiveBench.sizes))
	}
	if o.Files < 1 || o.Reps < 1 || o.Appends < 1 {
		return usageError(errors.New("--archive-files, --archive-reps and --archive-appends must be at least 1"))
	}
	line := progress.NewLine(a.stderr, "Benchmarking the archive")
	stage := 0
	notice := bench.NewTryNotice(a.stderr, a.showProgress(), a.verbose)
	o.Progress = func(s string) {
		notice.Trying(s)
		stage++
		line.SetLabel("Benchmarking the archive: " + s)
		line.Update(stage, stage)
	}
	watch := bench.StartWatch()
	res, err := archivebench.Run(ctx, o)
	notice.Done()
	line.Done()
	if err != nil {
		return err
	}
	defer func() {
		// After the output, as warnRun's figures would be.
		warnRun(a, watch, nil)
		for _, s := range res.SpreadWarnings() {
			a.warnf("%s", s)
		}
	}()
	switch bf.format {
	case "json":
		return writeJSON(a.stdout, res)
	case "csv":
		return res.WriteCSV(a.stdout)
	}
	res.WriteTable(a.stdout)
	return nil
}
