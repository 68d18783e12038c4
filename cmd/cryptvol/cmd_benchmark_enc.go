package main

import (
	"context"
	"errors"
	"fmt"
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
	line := progress.NewLine(a.stderr, "Benchmarking enc")
	o.Progress = line.Update
	watch := bench.StartWatch()
	r, err := encbench.Run(ctx, o)
	line.Done()
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
		return r.WriteCSV(a.stdout, o.VsOpenSSL)
	}
	r.WriteTable(a.stdout, o.VsOpenSSL)
	return nil
}
