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

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/internal/progress"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// matrixFlags are `benchmark matrix`'s own options.
var matrixFlags struct {
	hashes      []string
	encryptions []string
	dir         string
	truecrypt   bool
}

func init() {
	registerBenchmark("matrix", &benchmarkKind{
		summary: "create a volume for every hash x encryption pair: creation speed and header derivation time",
		flags: func(fs *pflag.FlagSet) {
			fs.StringSliceVar(&matrixFlags.hashes, "hashes", nil, "matrix: only these PRFs (default: every one)")
			fs.StringSliceVar(&matrixFlags.encryptions, "encryptions", nil, "matrix: only these ciphers/cascades (default: all 15)")
			fs.StringVar(&matrixFlags.dir, "dir", "", "matrix: where to create the volumes (default: the temporary directory)")
			fs.BoolVar(&matrixFlags.truecrypt, "truecrypt", false, "matrix: TrueCrypt format (its PRFs and ciphers only)")
		},
		run: runBenchMatrix,
	})
}

// matrixRow is one created volume.
type matrixRow struct {
	Hash       string  `json:"hash"`
	Encryption string  `json:"encryption"`
	CreateBPS  float64 `json:"create_bps"`
	KDFSeconds float64 `json:"kdf_seconds"`
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
	total := int64(len(hashes) * len(encs))
	bar := progress.New(a.stderr, "Creating volumes", total, a.showProgress())
	var rows []matrixRow
	notice := a.newTryNotice()
	defer notice.done()
	for _, h := range hashes {
		for _, e := range encs {
			if err := ctx.Err(); err != nil {
				return err
			}
			notice.trying(h + " / " + e)
			row, err := matrixOne(ctx, filepath.Join(dir, "v.hc"), size, h, e, bf.pim)
			if err != nil {
				return createError(fmt.Errorf("%s / %s: %w", h, e, err))
			}
			rows = append(rows, row)
			bar.Add(1)
		}
	}
	notice.done()
	bar.Finish()
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
		w.Write([]string{"hash", "encryption", "create_bps", "kdf_seconds"})
		for _, r := range rows {
			w.Write([]string{r.Hash, r.Encryption, strconv.FormatFloat(r.CreateBPS, 'f', 0, 64), strconv.FormatFloat(r.KDFSeconds, 'f', 4, 64)})
		}
		w.Flush()
		return w.Error()
	}
	fmt.Fprintf(a.stdout, "Volume creation, %s volumes of %s (PIM %d)\n\n", map[bool]string{true: "TrueCrypt", false: "VeraCrypt"}[matrixFlags.truecrypt], humanSize(size), bf.pim)
	fmt.Fprintf(a.stdout, "%-12s %-28s %14s %12s\n", "Hash", "Encryption", "Create speed", "Header KDF")
	for _, r := range rows {
		fmt.Fprintf(a.stdout, "%-12s %-28s %12s/s %10.3f s\n", r.Hash, r.Encryption, progress.FormatRate(r.CreateBPS), r.KDFSeconds)
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
