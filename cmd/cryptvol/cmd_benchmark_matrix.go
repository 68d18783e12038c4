package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/bench"
	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/internal/progress"
	"github.com/cryptvol/cryptvol/internal/stats"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
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

// matrixRow is one hash x encryption pair: the medians over the volumes
// created (before issue 28, one volume), and their ranges (fields added
// after the first four, which keep their names).
type matrixRow struct {
	Hash          string  `json:"hash"`
	Encryption    string  `json:"encryption"`
	CreateBPS     float64 `json:"create_bps"`
	KDFSeconds    float64 `json:"kdf_seconds"`
	MinCreateBPS  float64 `json:"min_create_bps"`
	MaxCreateBPS  float64 `json:"max_create_bps"`
	MinKDFSeconds float64 `json:"min_kdf_seconds"`
	MaxKDFSeconds float64 `json:"max_kdf_seconds"`
	Samples       int     `json:"samples"`
}

// matrixPair creates runs volumes of one pair and sums them up.
func matrixPair(ctx context.Context, path string, size int64, hash, enc string, pim, runs int) (matrixRow, error) {
	var rates, kdfs []float64
	var row matrixRow
	for range runs {
		one, err := matrixOne(ctx, path, size, hash, enc, pim)
		if err != nil {
			return matrixRow{}, err
		}
		row.Hash, row.Encryption = one.Hash, one.Encryption
		rates, kdfs = append(rates, one.CreateBPS), append(kdfs, one.KDFSeconds)
	}
	row.CreateBPS, row.MinCreateBPS, row.MaxCreateBPS = stats.MedianRange(rates)
	row.KDFSeconds, row.MinKDFSeconds, row.MaxKDFSeconds = stats.MedianRange(kdfs)
	row.Samples = runs
	return row, nil
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
	hashes := matrixFlags.hashes
	if len(hashes) == 0 {
		hashes = []string{"SHA-512", "Whirlpool", "SHA-256", "BLAKE2s-256", "Streebog", "RIPEMD-160", "argon2id"}
		if matrixFlags.truecrypt {
			hashes = []string{"RIPEMD-160", "SHA-512", "Whirlpool"}
		}
	}
	encs := matrixFlags.encryptions
	if len(encs) == 0 {
		for _, c := range ciphers.Chains() {
			if matrixFlags.truecrypt && (strings.Contains(c.Name, "Camellia") || strings.Contains(c.Name, "Kuznyechik")) {
				continue
			}
			encs = append(encs, c.Name)
		}
	}
	dir, err := os.MkdirTemp(matrixFlags.dir, "cryptvol-matrix-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	total := int64(len(hashes) * len(encs) * matrixFlags.runs)
	bar := progress.New(a.stderr, "Creating volumes", total, a.showProgress())
	var rows []matrixRow
	watch := bench.StartWatch()
	notice := a.newTryNotice()
	defer notice.done()
	for _, h := range hashes {
		for _, e := range encs {
			if err := ctx.Err(); err != nil {
				return err
			}
			notice.trying(h + " / " + e)
			row, err := matrixPair(ctx, filepath.Join(dir, "v.hc"), size, h, e, bf.pim, matrixFlags.runs)
			if err != nil {
				return createError(fmt.Errorf("%s / %s: %w", h, e, err))
			}
			rows = append(rows, row)
			bar.Add(int64(matrixFlags.runs))
		}
	}
	notice.done()
	bar.Finish()
	var figs []figure
	for _, r := range rows {
		figs = append(figs, figure{r.Hash + " / " + r.Encryption + " creation", r.CreateBPS, r.MinCreateBPS, r.MaxCreateBPS})
	}
	defer warnRun(a, watch, figs)
	result := struct {
		Size    int64       `json:"size"`
		PIM     int         `json:"pim"`
		Volumes []matrixRow `json:"volumes"`
	}{size, bf.pim, rows}
	switch bf.format {
	case "svg", "html":
		return writeChart(a, bf.format, result)
	case "json":
		return writeJSON(a.stdout, result)
	case "csv":
		w := csv.NewWriter(a.stdout)
		w.Write([]string{"hash", "encryption", "create_bps", "kdf_seconds", "min_create_bps", "max_create_bps", "min_kdf_seconds", "max_kdf_seconds", "samples"})
		for _, r := range rows {
			w.Write([]string{r.Hash, r.Encryption, strconv.FormatFloat(r.CreateBPS, 'f', 0, 64), strconv.FormatFloat(r.KDFSeconds, 'f', 4, 64),
				strconv.FormatFloat(r.MinCreateBPS, 'f', 0, 64), strconv.FormatFloat(r.MaxCreateBPS, 'f', 0, 64),
				strconv.FormatFloat(r.MinKDFSeconds, 'f', 4, 64), strconv.FormatFloat(r.MaxKDFSeconds, 'f', 4, 64), strconv.Itoa(r.Samples)})
		}
		w.Flush()
		return w.Error()
	}
	fmt.Fprintf(a.stdout, "Volume creation, %s volumes of %s (PIM %d); medians of %d volumes per pair (min–max)\n\n",
		map[bool]string{true: "TrueCrypt", false: "VeraCrypt"}[matrixFlags.truecrypt], humanSize(size), bf.pim, matrixFlags.runs)
	fmt.Fprintf(a.stdout, "%-12s %-28s %14s %-19s %12s\n", "Hash", "Encryption", "Create speed", "", "Header KDF")
	for _, r := range rows {
		fmt.Fprintf(a.stdout, "%-12s %-28s %12s/s %-19s %10.3f s (%.3f – %.3f)\n", r.Hash, r.Encryption, progress.FormatRate(r.CreateBPS),
			"("+progress.FormatRate(r.MinCreateBPS)+" – "+progress.FormatRate(r.MaxCreateBPS)+")", r.KDFSeconds, r.MinKDFSeconds, r.MaxKDFSeconds)
	}
	return nil
}

// matrixOne creates one volume (filled, as a real creation does), measures
// it and deletes it.
func matrixOne(ctx context.Context, path string, size int64, hash, enc string, pim int) (matrixRow, error) {
	defer os.Remove(path)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		return matrixRow{}, err
	}
	if err := os.Truncate(path, size); err != nil {
		return matrixRow{}, err
	}
	dev, err := volume.OpenDevice(path, false)
	if err != nil {
		return matrixRow{}, err
	}
	defer dev.Close()
	creds := volume.Credentials{Password: []byte("cryptvol benchmark matrix"), PIM: pim}
	cr, err := tcrypt.Create(ctx, dev, creds, tcrypt.CreateOptions{TrueCrypt: matrixFlags.truecrypt, Encryption: enc, Hash: hash})
	if err != nil {
		return matrixRow{}, err
	}
	row := matrixRow{Hash: cr.Unlocked.Info.Hash, Encryption: cr.Unlocked.Info.Encryption, KDFSeconds: cr.KDFTime.Seconds()}
	if s := cr.FillTime.Seconds(); s > 0 {
		row.CreateBPS = float64(cr.Unlocked.DataSize) / s
	}
	return row, nil
}
