package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/bench"
	"github.com/cryptvol/cryptvol/internal/progress"
	"github.com/cryptvol/cryptvol/opensslenc/encbench"
)

// encBenchFlags are the options `benchmark enc` adds to the shared set.
var encBenchFlags struct {
	vsOpenSSL bool
	rounds    int
}

func init() {
	registerBenchmark("enc", &benchmarkKind{
		summary: "cryptvol enc speed per cipher (--size, default 50M); --vs-openssl runs openssl enc beside it",
		flags: func(fs *pflag.FlagSet) {
			if fs.Lookup("vs-openssl") == nil {
				fs.BoolVar(&encBenchFlags.vsOpenSSL, "vs-openssl", false, "enc: also run `openssl enc` on the same data and print the ratio")
			}
			if fs.Lookup("enc-rounds") == nil {
				fs.IntVar(&encBenchFlags.rounds, "enc-rounds", 3, "enc: runs per figure; each figure is their median, with min–max")
			}
		},
		run: runBenchEnc,
	})
}

func runBenchEnc(ctx context.Context, a *app, bf *benchFlags, args []string) error {
	if len(args) > 0 {
		return usageError(fmt.Errorf("unexpected argument %q", args[0]))
	}
	for _, f := range []string{"buffer", "threads", "time", "pim"} {
		if bf.fs.Changed(f) {
			return usageError(fmt.Errorf("--%s does not apply to the enc benchmark (it takes --size, --algorithms, --vs-openssl, --enc-rounds)", f))
		}
	}
	switch bf.format {
	case "table", "csv", "json":
	default:
		return formatError(bf.format, false)
	}
	o := encbench.Options{
		Size:      encbench.DefaultSize,
		VsOpenSSL: encBenchFlags.vsOpenSSL,
		Rounds:    encBenchFlags.rounds,
	}
	if bf.size != "" {
		n, err := parseSize(bf.size)
		if err != nil || n <= 0 {
			return usageError(fmt.Errorf("--size %q: want a positive size such as 50M", bf.size))
		}
		o.Size = n
	}
	if o.Rounds < 1 {
		return usageError(fmt.Errorf("--enc-rounds %d: want 1 or more", o.Rounds))
	}
	for _, n := range bf.algorithms {
		o.Ciphers = append(o.Ciphers, strings.ToLower(strings.TrimPrefix(n, "-")))
	}
	line := newProgressLine(a.stderr, "Benchmarking enc")
	o.Progress = line.update
	watch := bench.StartWatch()
	r, err := encbench.Run(ctx, o)
	line.done()
	if err != nil {
		if errors.Is(err, encbench.ErrNoOpenSSL) {
			return withCode(exitIO, err)
		}
		return encError(err)
	}
	var figs []figure
	for _, c := range r.Results {
		figs = append(figs, figure{c.Cipher + " encryption", c.EncryptBPS, c.EncryptMinBPS, c.EncryptMaxBPS},
			figure{c.Cipher + " decryption", c.DecryptBPS, c.DecryptMinBPS, c.DecryptMaxBPS})
	}
	defer warnRun(a, watch, figs)
	switch bf.format {
	case "json":
		return writeJSON(a.stdout, r)
	case "csv":
		w := csv.NewWriter(a.stdout)
		// The range columns come after the old ones.
		w.Write([]string{"cipher", "program", "encrypt_bps", "decrypt_bps", "encrypt_min_bps", "encrypt_max_bps", "decrypt_min_bps", "decrypt_max_bps"})
		for _, c := range r.Results {
			w.Write([]string{c.Cipher, "cryptvol", encBPS(c.EncryptBPS), encBPS(c.DecryptBPS),
				encBPS(c.EncryptMinBPS), encBPS(c.EncryptMaxBPS), encBPS(c.DecryptMinBPS), encBPS(c.DecryptMaxBPS)})
			if o.VsOpenSSL {
				w.Write([]string{c.Cipher, "openssl", encBPS(c.OpenSSLEncryptBPS), encBPS(c.OpenSSLDecryptBPS),
					encBPS(c.OpenSSLEncryptMinBPS), encBPS(c.OpenSSLEncryptMaxBPS), encBPS(c.OpenSSLDecryptMinBPS), encBPS(c.OpenSSLDecryptMaxBPS)})
			}
		}
		w.Flush()
		return w.Error()
	}
	clock := "per CPU second (user+system)"
	if !r.CPUTime {
		clock = "per wall-clock second (no CPU clock here)"
	}
	fmt.Fprintf(a.stdout, "enc: %s of random data, file to the null device, raw -K/-iv keys; medians of %d rounds (min–max); %s; 1 MB = 2^20 bytes\n",
		humanSize(r.Size), r.Rounds, clock)
	if o.VsOpenSSL {
		fmt.Fprintf(a.stdout, "openssl: %s; its start-up (an empty run with the same options) is subtracted\n", r.OpenSSL)
	}
	fmt.Fprintln(a.stdout)
	width := len("Cipher")
	for _, c := range r.Results {
		width = max(width, len(c.Cipher))
	}
	rate := func(bps float64) string { return progress.FormatRate(bps) + "/s" }
	span := func(lo, hi float64) string {
		return "(" + progress.FormatRate(lo) + " – " + progress.FormatRate(hi) + ")"
	}
	fmt.Fprintf(a.stdout, "%-*s  %-8s  %12s %-19s  %12s\n", width, "Cipher", "Program", "Encryption", "", "Decryption")
	for _, c := range r.Results {
		fmt.Fprintf(a.stdout, "%-*s  %-8s  %12s %-19s  %12s %s\n", width, c.Cipher, "cryptvol", rate(c.EncryptBPS), span(c.EncryptMinBPS, c.EncryptMaxBPS), rate(c.DecryptBPS), span(c.DecryptMinBPS, c.DecryptMaxBPS))
		if o.VsOpenSSL {
			fmt.Fprintf(a.stdout, "%-*s  %-8s  %12s %-19s  %12s %s\n", width, "", "openssl", rate(c.OpenSSLEncryptBPS), span(c.OpenSSLEncryptMinBPS, c.OpenSSLEncryptMaxBPS), rate(c.OpenSSLDecryptBPS), span(c.OpenSSLDecryptMinBPS, c.OpenSSLDecryptMaxBPS))
			fmt.Fprintf(a.stdout, "%-*s  %-8s  %11.2fx %-19s  %11.2fx\n", width, "", "ratio",
				c.EncryptBPS/c.OpenSSLEncryptBPS, "", c.DecryptBPS/c.OpenSSLDecryptBPS)
		}
	}
	return nil
}

// encBPS formats bytes per second for CSV.
func encBPS(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) }
