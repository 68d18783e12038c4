// Package matrix is `cryptvol benchmark matrix`: it creates a VeraCrypt
// (or TrueCrypt) volume for every hash x encryption pair and reports the
// creation speed and the header derivation time of each — the seed
// study, where a script created a 10 MB TrueCrypt volume per pair and
// scraped "Done 100% Speed 3.4 MB/s" from the log, as one call.
package matrix

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/internal/progress"
	"github.com/cryptvol/cryptvol/internal/stats"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// Options say which volumes to create.
type Options struct {
	// Dir is where the volumes are created (one at a time); "" is the
	// temporary directory.
	Dir  string
	Size int64
	// Hashes and Encryptions are the pairs' two sides; nil is every PRF
	// and every cipher or cascade of the format.
	Hashes, Encryptions []string
	TrueCrypt           bool
	PIM                 int
	// Runs is the number of volumes created per pair: each figure is
	// their median, with min–max.
	Runs int
	// Trying, if set, is told each pair before it starts ("SHA-512 /
	// AES"); Created after each pair's Runs volumes.
	Trying  func(pair string)
	Created func(volumes int)
}

// Row is one hash x encryption pair: the medians over the volumes
// created (before issue 28, one volume), and their ranges (fields added
// after the first four, which keep their names). Its JSON is part of the
// command-line contract (docs/ARCHITECTURE.md).
type Row struct {
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

// Result is the output of `benchmark matrix --format json`.
type Result struct {
	Size      int64 `json:"size"`
	PIM       int   `json:"pim"`
	Volumes   []Row `json:"volumes"`
	truecrypt bool
	runs      int
}

// Pairs returns the hashes and encryptions o resolves to.
func (o Options) Pairs() (hashes, encs []string) {
	hashes, encs = o.Hashes, o.Encryptions
	if len(hashes) == 0 {
		hashes = []string{"SHA-512", "Whirlpool", "SHA-256", "BLAKE2s-256", "Streebog", "RIPEMD-160", "argon2id"}
		if o.TrueCrypt {
			hashes = []string{"RIPEMD-160", "SHA-512", "Whirlpool"}
		}
	}
	if len(encs) == 0 {
		for _, c := range ciphers.Chains() {
			if o.TrueCrypt && (strings.Contains(c.Name, "Camellia") || strings.Contains(c.Name, "Kuznyechik")) {
				continue
			}
			encs = append(encs, c.Name)
		}
	}
	return hashes, encs
}

// Run creates o.Runs volumes of every pair, in order, and sums them up.
// An error names the pair it came from.
func Run(ctx context.Context, o Options) (*Result, error) {
	hashes, encs := o.Pairs()
	dir, err := os.MkdirTemp(o.Dir, "cryptvol-matrix-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	res := &Result{Size: o.Size, PIM: o.PIM, truecrypt: o.TrueCrypt, runs: o.Runs}
	for _, h := range hashes {
		for _, e := range encs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if o.Trying != nil {
				o.Trying(h + " / " + e)
			}
			row, err := pair(ctx, filepath.Join(dir, "v.hc"), o, h, e)
			if err != nil {
				return nil, fmt.Errorf("%s / %s: %w", h, e, err)
			}
			res.Volumes = append(res.Volumes, row)
			if o.Created != nil {
				o.Created(o.Runs)
			}
		}
	}
	return res, nil
}

// pair creates o.Runs volumes of one pair and sums them up.
func pair(ctx context.Context, path string, o Options, hash, enc string) (Row, error) {
	var rates, kdfs []float64
	var row Row
	for range o.Runs {
		one, err := createOne(ctx, path, o, hash, enc)
		if err != nil {
			return Row{}, err
		}
		row.Hash, row.Encryption = one.Hash, one.Encryption
		rates, kdfs = append(rates, one.CreateBPS), append(kdfs, one.KDFSeconds)
	}
	row.CreateBPS, row.MinCreateBPS, row.MaxCreateBPS = stats.MedianRange(rates)
	row.KDFSeconds, row.MinKDFSeconds, row.MaxKDFSeconds = stats.MedianRange(kdfs)
	row.Samples = o.Runs
	return row, nil
}

// createOne creates one volume (filled, as a real creation does),
// measures it and deletes it.
func createOne(ctx context.Context, path string, o Options, hash, enc string) (Row, error) {
	defer os.Remove(path)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		return Row{}, err
	}
	if err := os.Truncate(path, o.Size); err != nil {
		return Row{}, err
	}
	dev, err := volume.OpenDevice(path, false)
	if err != nil {
		return Row{}, err
	}
	defer dev.Close()
	creds := volume.Credentials{Password: []byte("cryptvol benchmark matrix"), PIM: o.PIM}
	cr, err := tcrypt.Create(ctx, dev, creds, tcrypt.CreateOptions{TrueCrypt: o.TrueCrypt, Encryption: enc, Hash: hash})
	if err != nil {
		return Row{}, err
	}
	row := Row{Hash: cr.Unlocked.Info.Hash, Encryption: cr.Unlocked.Info.Encryption, KDFSeconds: cr.KDFTime.Seconds()}
	if s := cr.FillTime.Seconds(); s > 0 {
		row.CreateBPS = float64(cr.Unlocked.DataSize) / s
	}
	return row, nil
}

// WriteCSV writes one row per pair.
func (r *Result) WriteCSV(w io.Writer) error {
	c := csv.NewWriter(w)
	c.Write([]string{"hash", "encryption", "create_bps", "kdf_seconds", "min_create_bps", "max_create_bps", "min_kdf_seconds", "max_kdf_seconds", "samples"})
	for _, x := range r.Volumes {
		f := strconv.FormatFloat
		c.Write([]string{x.Hash, x.Encryption, f(x.CreateBPS, 'f', 0, 64), f(x.KDFSeconds, 'f', 4, 64),
			f(x.MinCreateBPS, 'f', 0, 64), f(x.MaxCreateBPS, 'f', 0, 64),
			f(x.MinKDFSeconds, 'f', 4, 64), f(x.MaxKDFSeconds, 'f', 4, 64), strconv.Itoa(x.Samples)})
	}
	c.Flush()
	return c.Error()
}

// WriteTable writes the pairs as a table with each median's min–max.
func (r *Result) WriteTable(w io.Writer) {
	format := map[bool]string{true: "TrueCrypt", false: "VeraCrypt"}[r.truecrypt]
	fmt.Fprintf(w, "Volume creation, %s volumes of %s (PIM %d); medians of %d volumes per pair (min–max)\n\n",
		format, progress.FormatSize(r.Size), r.PIM, r.runs)
	fmt.Fprintf(w, "%-12s %-28s %14s %-19s %12s\n", "Hash", "Encryption", "Create speed", "", "Header KDF")
	rate := progress.FormatRate
	for _, x := range r.Volumes {
		fmt.Fprintf(w, "%-12s %-28s %12s/s %-19s %10.3f s (%.3f – %.3f)\n", x.Hash, x.Encryption, rate(x.CreateBPS),
			"("+rate(x.MinCreateBPS)+" – "+rate(x.MaxCreateBPS)+")", x.KDFSeconds, x.MinKDFSeconds, x.MaxKDFSeconds)
	}
}
