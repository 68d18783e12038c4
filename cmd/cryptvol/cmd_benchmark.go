package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/bench"
	"github.com/cryptvol/cryptvol/internal/progress"
)

// benchmarkKind is one `cryptvol benchmark KIND`. Other files add kinds
// (matrix, io, ...) with registerBenchmark in their init functions.
type benchmarkKind struct {
	summary string
	// flags, if set, adds the kind's own flags to the shared ones.
	flags func(fs *pflag.FlagSet)
	// run measures and prints; args are the positional arguments after
	// the kind.
	run func(ctx context.Context, a *app, bf *benchFlags, args []string) error
}

var benchmarkKinds = map[string]*benchmarkKind{}

func registerBenchmark(name string, k *benchmarkKind) { benchmarkKinds[name] = k }

// benchFlags are the options every benchmark kind shares.
type benchFlags struct {
	fs         *pflag.FlagSet
	buffer     string
	threads    int
	algorithms []string
	format     string
	time       time.Duration
	pim        int
	argon2Full bool
	// size is shared by the kinds that need a data size (matrix, io, enc,
	// archive): "" means the kind's own default. Kinds must not define a
	// --size flag of their own (flags of all kinds share one flag set).
	size string
}

// options turns the flags into bench.Options, checking them.
func (bf *benchFlags) options() (bench.Options, error) {
	var o bench.Options
	switch bf.format {
	case "table", "csv", "json", "svg", "html":
	default:
		return o, formatError(bf.format, true)
	}
	n, err := parseSize(bf.buffer)
	if err != nil {
		return o, usageError(fmt.Errorf("--buffer: %v", err))
	}
	if n < bench.SectorSize || n%bench.SectorSize != 0 || n > 1<<30 {
		return o, usageError(fmt.Errorf("--buffer %s: want a multiple of %d bytes up to 1G", bf.buffer, bench.SectorSize))
	}
	if bf.threads < 0 {
		return o, usageError(fmt.Errorf("--threads %d: want 1 or more (0 = all cores)", bf.threads))
	}
	if bf.time < 0 {
		return o, usageError(fmt.Errorf("--time %v: want a positive duration", bf.time))
	}
	if bf.pim < 0 {
		return o, usageError(fmt.Errorf("--pim %d: want 0 (default) or more", bf.pim))
	}
	return bench.Options{
		Buffer:     int(n),
		Threads:    bf.threads,
		Algorithms: bf.algorithms,
		MinTime:    bf.time,
		PIM:        bf.pim,
		Argon2Full: bf.argon2Full,
	}, nil
}

func init() {
	register(&command{
		name:    "benchmark",
		summary: "measure cipher (XTS) and key-derivation speed, like TrueCrypt's benchmark",
		usage: `Usage: cryptvol benchmark [ciphers|kdf|matrix|io|enc|archive] [--buffer 5M] [--threads N]
                          [--algorithms A,B] [--format table|csv|json|svg|html] [--time D] [--pim N]
       cryptvol benchmark compare RUN.json|RUN.html... [--labels A,B] [--format ...]

ciphers (the default) encrypts and decrypts a buffer in place with XTS
(512-byte data units, random keys) for each of VeraCrypt's 15 ciphers and
cascades, and with Adiantum (Adiantum-XChaCha12 and Adiantum-XChaCha20,
LUKS2's xchacha12,aes-adiantum-plain64 and xchacha20,..., over 4096-byte
sectors; 512 if the buffer is no multiple of 4096), the cipher for CPUs
without AES instructions, and prints Encryption, Decryption and their
Mean, fastest first; --algorithms adiantum selects both Adiantum rows.
Speeds are in TrueCrypt's units (1 MB = 2^20 bytes); --format json and csv
give bytes per second. Each algorithm runs for --time per direction in
21 samples, taken in rounds over all algorithms so that each one's
samples spread over the whole run; each figure is their median, with the
min–max (Range) beside it. The header line names the CPU,
the platform, whether AES instructions are used and the code path of each
cipher.

kdf prints PBKDF2 iterations per second, on one core, for each PRF of
VeraCrypt and TrueCrypt, and what one VeraCrypt header derivation with
--pim takes with it: that time is computed from the rate (iterations x
output blocks per core / rate, with the blocks spread over --threads cores as
cryptvol does), not timed. Argon2id's time is scaled from one- and two-pass
runs over 256 MiB to VeraCrypt's cost (416 MiB, 6 passes at the default PIM),
or with --argon2-full one full derivation is timed. SHA-1 is TrueCrypt-only:
its row uses TrueCrypt's 2000 iterations.

io TARGET writes --size (default 256M) in --block-size writes with fsync
and reads it back, straight to TARGET (a new file, or a block device with
--force) and through an encrypted volume on it (--encryption, --via mount,
api, webdav or nfs), and prints MB/s of both and the overhead in percent.
With --via webdav the file goes through the WebDAV front end of 'cryptvol
serve' (an HTTP PUT and GET on loopback), with --via nfs through its NFSv3
front end (WRITEs answered after a sync, then READs, on loopback), and the
FUSE mount is measured beside either in the same run where FUSE is
available.

--format svg draws the run as a chart (ciphers: Encrypt/Decrypt/Mean bars
per algorithm; kdf: unlock time per PRF; matrix: a hash x encryption heat
map of creation speed; io: raw against encrypted write and read) and
--format html writes one self-contained report file (no network: styles
and the chart inline) with the machine, the chart, the table beside it and
the run's JSON embedded. compare reads runs saved with --format json or
html, of one kind, and prints one column per run and each run's ratio to
the first (table, csv, json, svg or html), e.g. a Pi with and without
turbo, or AES instructions on and off (GODEBUG=cpu.all=off masks them).
Where a run's figure and the first run's have min–max ranges that overlap,
compare prints "same" instead of a ratio: each range is what that run's
own samples spread over, and a difference no larger than the noise
either run saw is no finding. E.g. AES at 2445 MB/s (1654–3733) and
4893 MB/s (4258–7566) is 2.00x; Serpent at 302 (231–427) and 468
(246–577) is "same". (Overlap is the rule rather than "median inside the
other's range" because it is symmetric: a run compared with itself, or A
with B and B with A, always read alike.) Runs of older versions that
report no range get a ratio. The busy-machine warnings of each run are
repeated on stderr.

Each kind reports medians with their min–max: ciphers and kdf over 21
samples (at least 5 for a slow cipher), io over --runs, enc over
--enc-rounds, matrix over --matrix-runs volumes per pair. A warning on
stderr (and in the JSON's warnings) says when a figure's range exceeds
10% of its median, or the machine was busy: a load average over half a
run per core (Linux /proc/loadavg; elsewhere not checked) or CPU time
stolen by the hypervisor (/proc/stat). A try (an algorithm, a volume, a
pass) that takes over 2 s names itself on a terminal, and with -v on
any stderr.

The whole run takes a few seconds on an idle machine (a slow cascade's 21
samples are 21 calls of the whole buffer), more on a busy one; a progress
line is shown on a terminal.

Examples:
  cryptvol benchmark
  cryptvol benchmark --buffer 100M --threads 1 --algorithms AES,Serpent-Twofish-AES
  cryptvol benchmark --format json --buffer 4096 --threads 1
  cryptvol benchmark kdf --pim 485
  cryptvol benchmark io /mnt/disk/bench.tmp --size 1G
  cryptvol benchmark io /mnt/disk/bench.tmp --via webdav --format json
  cryptvol benchmark --format html > report.html
  GODEBUG=cpu.all=off cryptvol benchmark --format json > generic.json
  cryptvol benchmark --format json > full.json
  cryptvol benchmark compare full.json generic.json --format svg > ratio.svg
`,
		run: runBenchmark,
	})
	registerBenchmark("ciphers", &benchmarkKind{summary: "XTS speed of every cipher and cascade", run: runBenchCiphers})
	registerBenchmark("kdf", &benchmarkKind{summary: "PBKDF2 rate per PRF and header derivation time", run: runBenchKDF})
}

func runBenchmark(ctx context.Context, a *app, args []string) error {
	c := commands["benchmark"]
	fs := newFlags(c, a)
	bf := &benchFlags{fs: fs}
	fs.StringVar(&bf.buffer, "buffer", "5M", "bytes per call: K, M, G suffixes (2^10...), a multiple of 512")
	fs.IntVarP(&bf.threads, "threads", "t", 0, "goroutines per call (0 = all cores); only shares of 64 KiB or more are split off")
	fs.StringSliceVar(&bf.algorithms, "algorithms", nil, "only these ciphers/cascades (or PRFs for kdf), comma-separated")
	fs.StringVar(&bf.format, "format", "table", "output: table, csv, json, or a chart: svg, html (a self-contained report)")
	fs.DurationVar(&bf.time, "time", 0, "measuring time per algorithm and direction (default 100ms; kdf 250ms)")
	fs.IntVar(&bf.pim, "pim", 0, "kdf: VeraCrypt PIM of the header figures (0 = default)")
	fs.BoolVar(&bf.argon2Full, "argon2-full", false, "kdf: time one full Argon2id derivation instead of scaling smaller runs")
	fs.StringVar(&bf.size, "size", "", "matrix, io, enc, archive: data size (K, M, G suffixes); default depends on the kind")
	for _, name := range sortedKinds() { // sorted: one help text, always the same
		if k := benchmarkKinds[name]; k.flags != nil {
			k.flags(fs)
		}
	}
	if err := parseFlags(fs, c, a, args); err != nil {
		return err
	}
	kind := "ciphers"
	rest := fs.Args()
	if len(rest) > 0 {
		kind, rest = rest[0], rest[1:]
	}
	k, ok := benchmarkKinds[kind]
	if !ok {
		return usageError(fmt.Errorf("unknown benchmark %q%s (want %s)", kind, didYouMean(kind, append(sortedKinds(), "compare")), kindNames()))
	}
	return k.run(ctx, a, bf, rest)
}

// kindNames lists the kinds, the default (ciphers) first, then the others
// alphabetically.
func kindNames() string {
	names := make([]string, 0, len(benchmarkKinds))
	for n := range benchmarkKinds {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == "ciphers") != (names[j] == "ciphers") {
			return names[i] == "ciphers"
		}
		return names[i] < names[j]
	})
	return strings.Join(names, ", ")
}

// benchError maps the engine's option errors to usage errors.
func benchError(err error) error {
	if errors.Is(err, bench.ErrInvalidOption) {
		return usageError(err)
	}
	return err
}

func runBenchCiphers(ctx context.Context, a *app, bf *benchFlags, args []string) error {
	if len(args) > 0 {
		return usageError(fmt.Errorf("unexpected argument %q", args[0]))
	}
	o, err := bf.options()
	if err != nil {
		return err
	}
	line := progress.NewLine(a.stderr, "Benchmarking ciphers")
	o.Progress = line.Update
	notice := bench.NewTryNotice(a.stderr, a.showProgress(), a.verbose)
	o.Trying = notice.Trying
	r := bench.NewReport(o)
	r.Ciphers, err = bench.Ciphers(ctx, o)
	notice.Done()
	line.Done()
	if err != nil {
		return benchError(err)
	}
	r.Finish()
	defer printBenchWarnings(a, r)
	switch bf.format {
	case "svg", "html":
		return writeChart(a, bf.format, r)
	case "json":
		return writeJSON(a.stdout, r)
	case "csv":
		return r.WriteCiphersCSV(a.stdout)
	}
	r.WriteCiphersTable(a.stdout)
	return nil
}

func runBenchKDF(ctx context.Context, a *app, bf *benchFlags, args []string) error {
	if len(args) > 0 {
		return usageError(fmt.Errorf("unexpected argument %q", args[0]))
	}
	if bf.fs.Changed("buffer") {
		return usageError(errors.New("--buffer applies to the cipher benchmark, not kdf"))
	}
	o, err := bf.options()
	if err != nil {
		return err
	}
	line := progress.NewLine(a.stderr, "Benchmarking key derivation")
	o.Progress = line.Update
	notice := bench.NewTryNotice(a.stderr, a.showProgress(), a.verbose)
	o.Trying = notice.Trying
	r := bench.NewReport(o)
	r.Buffer = 0
	r.KDF, err = bench.KDF(ctx, o)
	notice.Done()
	line.Done()
	if err != nil {
		return benchError(err)
	}
	r.Finish()
	defer printBenchWarnings(a, r)
	switch bf.format {
	case "svg", "html":
		return writeChart(a, bf.format, r)
	case "json":
		return writeJSON(a.stdout, r)
	case "csv":
		return r.WriteKDFCSV(a.stdout)
	}
	r.WriteKDFTable(a.stdout, bf.pim)
	return nil
}

// printBenchWarnings tells, on standard error (standard output may be
// JSON or CSV), what makes a run's figures less trustworthy.
func printBenchWarnings(a *app, r bench.Report) {
	for _, w := range r.Warnings {
		a.warnf("%s", w)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// groupDigits writes 1234567 as 1,234,567.
func groupDigits(n int64) string { return progress.GroupDigits(n) }

// sortedKinds are the benchmark kinds' names, sorted.
func sortedKinds() []string {
	names := make([]string, 0, len(benchmarkKinds))
	for n := range benchmarkKinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
