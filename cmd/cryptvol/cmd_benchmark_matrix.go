package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/bench"
	"github.com/cryptvol/cryptvol/bench/matrix"
	"github.com/cryptvol/cryptvol/internal/progress"
)

// matrixFlags are `benchmark matrix`'s own options.
var matrixFlags struct {
	hashes      []string
	encryptions []string
	dir         string
	truecrypt   bool
	runs        int
}

func init() {
	registerBenchmark("matrix", &benchmarkKind{
		summary: "create a volume for every hash x encryption pair: creation speed and header derivation time",
		flags: func(fs *pflag.FlagSet) {
			fs.StringSliceVar(&matrixFlags.hashes, "hashes", nil, "matrix: only these PRFs (default: every one)")
			fs.StringSliceVar(&matrixFlags.encryptions, "encryptions", nil, "matrix: only these ciphers/cascades (default: all 15)")
			fs.StringVar(&matrixFlags.dir, "dir", "", "matrix: where to create the volumes (default: the temporary directory)")
			fs.BoolVar(&matrixFlags.truecrypt, "truecrypt", false, "matrix: TrueCrypt format (its PRFs and ciphers only)")
			fs.IntVar(&matrixFlags.runs, "matrix-runs", 3, "matrix: volumes created per pair; each figure is their median, with min–max")
		},
		run: runBenchMatrix,
	})
}

// The seed study: a script created a 10 MB TrueCrypt volume for every hash x
// encryption pair and scraped "Done 100% Speed 3.4 MB/s" from the log. This
// is that study as one command.
func runBenchMatrix(ctx context.Context, a *app, bf *benchFlags, args []string) error {
	if len(args) != 0 {
		return usageError(fmt.Errorf("benchmark matrix takes no arguments, got %q", args))
	}
	switch bf.format {
	case "table", "csv", "json", "svg", "html":
	default:
		return formatError(bf.format, true)
	}
	if matrixFlags.runs < 1 || matrixFlags.runs > 100 {
		return usageError(fmt.Errorf("--matrix-runs %d: want 1 to 100", matrixFlags.runs))
	}
	sizeStr := bf.size
	if sizeStr == "" {
		sizeStr = "10M"
	}
	size, err := parseSize(sizeStr)
	if err != nil {
		return usageError(fmt.Errorf("--size: %v", err))
	}
	o := matrix.Options{Dir: matrixFlags.dir, Size: size, Hashes: matrixFlags.hashes, Encryptions: matrixFlags.encryptions,
		TrueCrypt: matrixFlags.truecrypt, PIM: bf.pim, Runs: matrixFlags.runs}
	hashes, encs := o.Pairs()
	bar := progress.New(a.stderr, "Creating volumes", int64(len(hashes)*len(encs)*o.Runs), a.showProgress())
	watch := bench.StartWatch()
	notice := bench.NewTryNotice(a.stderr, a.showProgress(), a.verbose)
	defer notice.Done()
	o.Trying, o.Created = notice.Trying, func(n int) { bar.Add(int64(n)) }
	result, err := matrix.Run(ctx, o)
	if err != nil {
		return createError(err)
	}
	notice.Done()
	bar.Finish()
	var figs []figure
	for _, r := range result.Volumes {
		figs = append(figs, figure{r.Hash + " / " + r.Encryption + " creation", r.CreateBPS, r.MinCreateBPS, r.MaxCreateBPS})
	}
	defer warnRun(a, watch, figs)
	switch bf.format {
	case "svg", "html":
		return writeChart(a, bf.format, result)
	case "json":
		return writeJSON(a.stdout, result)
	case "csv":
		return result.WriteCSV(a.stdout)
	}
	result.WriteTable(a.stdout)
	return nil
}
