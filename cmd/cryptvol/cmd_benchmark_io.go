package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/bench"
	"github.com/cryptvol/cryptvol/bench/iobench"
	"github.com/cryptvol/cryptvol/internal/progress"
	"github.com/cryptvol/cryptvol/mount"
)

// `cryptvol benchmark io TARGET` measures what encryption costs on a real
// disk: the seed home-server table (dd to the raw partition 116 MB/s,
// through LUKS 103 MB/s, -11%) made by cryptvol itself.

func init() {
	registerBenchmark("io", &benchmarkKind{
		summary: "raw versus encrypted write (with fsync) and read speed on a file or block device",
		flags:   addBenchIOFlags,
		run:     runBenchIO,
	})
}

// The io kind's flags are added to the shared benchmark flag set (whose
// --size it uses, 256M by default); another kind may already define one of
// the same name, which is then shared.
func addBenchIOFlags(fs *pflag.FlagSet) {
	if fs.Lookup("block-size") == nil {
		fs.String("block-size", "1M", "io: bytes per write(2) and read(2)")
	}
	if fs.Lookup("encryption") == nil {
		fs.String("encryption", "AES", "io: cipher or cascade of the encrypted pass (VeraCrypt names)")
	}
	if fs.Lookup("via") == nil {
		fs.String("via", "mount", "io: encrypted pass through a FUSE mount (mount), the Go API (api), or WebDAV (webdav) or NFSv3 (nfs) on loopback beside the FUSE mount")
	}
	if fs.Lookup("runs") == nil {
		fs.Int("runs", 3, "io: raw and encrypted passes, alternately; each figure is their median, with min–max")
	}
	if fs.Lookup("force") == nil {
		fs.Bool("force", false, "io: overwrite an existing file or a block device")
	}
}

// flagValue is a flag's value as text, or def if it was not given (a flag
// another kind defined may have another default).
func flagValue(fs *pflag.FlagSet, name, def string) string {
	if f := fs.Lookup(name); f != nil && f.Changed {
		return f.Value.String()
	}
	return def
}

func runBenchIO(ctx context.Context, a *app, bf *benchFlags, args []string) error {
	if len(args) != 1 {
		return usageError(errors.New("want one TARGET: a file path (created and removed) or a block device (overwritten, needs --force)"))
	}
	switch bf.format {
	case "table", "csv", "json", "svg", "html":
	default:
		return formatError(bf.format, true)
	}
	sizeFlag := bf.size
	if sizeFlag == "" {
		sizeFlag = "256M"
	}
	size, err := parseSize(sizeFlag)
	if err != nil {
		return usageError(fmt.Errorf("--size: %v", err))
	}
	bs, err := parseSize(flagValue(bf.fs, "block-size", "1M"))
	if err != nil {
		return usageError(fmt.Errorf("--block-size: %v", err))
	}
	if bs < 512 || bs%512 != 0 || bs > 256<<20 {
		return usageError(fmt.Errorf("--block-size %d: want a multiple of 512 up to 256M", bs))
	}
	if size < bs {
		return usageError(fmt.Errorf("--size %d is smaller than one block of %d", size, bs))
	}
	runs, err := strconv.Atoi(flagValue(bf.fs, "runs", "3"))
	if err != nil || runs < 1 || runs > 100 {
		return usageError(fmt.Errorf("--runs: want 1 to 100"))
	}
	via := flagValue(bf.fs, "via", "mount")
	if via != "mount" && via != "api" && via != "webdav" && via != "nfs" {
		return usageError(fmt.Errorf("--via %q: want mount, api, webdav or nfs", via))
	}
	target := args[0]
	if fi, err := os.Stat(target); err == nil && flagValue(bf.fs, "force", "false") != "true" {
		what := "file"
		if !fi.Mode().IsRegular() {
			what = "device"
		}
		return withCode(exitDestroy, fmt.Errorf("%s exists: the benchmark overwrites it (the whole %s's start for a device); pass --force if that is what you want", target, what))
	}
	if via == "mount" {
		if err := mount.Available(); err != nil {
			return withCode(exitIO, fmt.Errorf("%v; measure with --via api instead", err))
		}
	}
	line := progress.NewLine(a.stderr, "Benchmarking I/O")
	notice := bench.NewTryNotice(a.stderr, a.showProgress(), a.verbose)
	o := iobench.Options{
		Target: target, Size: size, BlockSize: int(bs), Encryption: flagValue(bf.fs, "encryption", "AES"), Via: via, Runs: runs,
		Progress: func(phase string) {
			notice.Trying(phase)
			line.SetLabel("Benchmarking I/O: " + phase)
			line.Update(0, 1)
		},
	}
	watch := bench.StartWatch()
	r, err := iobench.Run(ctx, o)
	notice.Done()
	line.Done()
	if err != nil {
		if errors.Is(err, iobench.ErrOptions) {
			return usageError(err)
		}
		return err
	}
	var figs []figure
	pass := func(name string, s iobench.Speed) {
		figs = append(figs, figure{name + " write", s.WriteBPS, s.WriteMinBPS, s.WriteMaxBPS}, figure{name + " read", s.ReadBPS, s.ReadMinBPS, s.ReadMaxBPS})
	}
	pass("Raw", r.Raw)
	pass("Encrypted", r.Encrypted)
	if r.Mount != nil {
		pass("FUSE mount", *r.Mount)
	}
	defer warnRun(a, watch, figs)
	switch bf.format {
	case "svg", "html":
		return writeChart(a, bf.format, r)
	case "json":
		return writeJSON(a.stdout, r)
	case "csv":
		return r.WriteCSV(a.stdout)
	}
	r.WriteTable(a.stdout)
	return nil
}
