package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/cryptvol/cryptvol/internal/progress"
)

// The report as text: the tables and CSV of `cryptvol benchmark` (the
// JSON is the Report itself). The CSV columns are part of the
// command-line contract (docs/ARCHITECTURE.md); columns are only added.

// WriteMachine says what machine the figures belong to: the CPU, whether
// AES instructions are used, its features and the code path of each
// cipher.
func (r Report) WriteMachine(w io.Writer) {
	aes := "not used (no AES instructions"
	if r.AESHW {
		aes = "used"
	} else if strings.Contains(strings.Join(r.Features, " "), "AES") {
		aes = "not used (generic build"
	}
	if !r.AESHW {
		aes += ")"
	}
	fmt.Fprintf(w, "CPU: %s (%d cores), %s/%s; AES instructions %s\n", r.CPU, r.Cores, r.GOOS, r.GOARCH, aes)
	feats := strings.Join(r.Features, " ")
	if feats == "" {
		feats = "none detected"
	}
	names := make([]string, 0, len(r.Implementations))
	for n := range r.Implementations {
		names = append(names, n)
	}
	sort.Strings(names)
	var paths []string
	for _, n := range names {
		paths = append(paths, n+"="+r.Implementations[n])
	}
	fmt.Fprintf(w, "CPU features: %s\nCode paths: %s\n", feats, strings.Join(paths, " "))
}

// MinSamples is the fewest samples behind a cipher figure of the run.
func (r Report) MinSamples() int {
	n := 0
	for i, c := range r.Ciphers {
		if i == 0 || c.Samples < n {
			n = c.Samples
		}
	}
	return n
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// WriteCiphersCSV writes the cipher results, one row per cipher.
func (r Report) WriteCiphersCSV(w io.Writer) error {
	c := csv.NewWriter(w)
	c.Write([]string{"algorithm", "mode", "encrypt_bps", "decrypt_bps", "mean_bps", "sector_size", "min_bps", "max_bps", "samples"})
	for _, x := range r.Ciphers {
		c.Write([]string{x.Name, x.Mode, itoa(x.EncryptBPS), itoa(x.DecryptBPS), itoa(x.MeanBPS), itoa(int64(x.SectorSize)),
			itoa(x.MinBPS), itoa(x.MaxBPS), strconv.Itoa(x.Samples)})
	}
	c.Flush()
	return c.Error()
}

// WriteCiphersTable writes the machine and the cipher results as
// TrueCrypt's benchmark shows them: encryption, decryption and mean
// speed, with the mean's min–max.
func (r Report) WriteCiphersTable(w io.Writer) {
	r.WriteMachine(w)
	units := "XTS with 512-byte data units"
	for _, c := range r.Ciphers {
		if c.Mode == "adiantum" {
			units += fmt.Sprintf(", Adiantum with %d-byte sectors", c.SectorSize)
			break
		}
	}
	fmt.Fprintf(w, "Buffer %s, %d thread(s), %s; 1 MB = 2^20 bytes\n", progress.FormatSize(int64(r.Buffer)), r.Threads, units)
	fmt.Fprintf(w, "Medians of %d samples; Range is the mean's min–max over them\n\n", r.MinSamples())
	width := len("Algorithm")
	for _, c := range r.Ciphers {
		width = max(width, len(c.Name))
	}
	fmt.Fprintf(w, "%-*s  %12s  %12s  %12s  %s\n", width, "Algorithm", "Encryption", "Decryption", "Mean", "Range")
	rate := func(bps int64) string { return progress.FormatRate(float64(bps)) + "/s" }
	for _, c := range r.Ciphers {
		fmt.Fprintf(w, "%-*s  %12s  %12s  %12s  %s – %s\n", width, c.Name, rate(c.EncryptBPS), rate(c.DecryptBPS), rate(c.MeanBPS),
			progress.FormatRate(float64(c.MinBPS)), progress.FormatRate(float64(c.MaxBPS)))
	}
}

// WriteKDFCSV writes the key-derivation results, one row per PRF.
func (r Report) WriteKDFCSV(w io.Writer) error {
	c := csv.NewWriter(w)
	c.Write([]string{"prf", "kdf", "iterations_per_second", "format", "pim", "header_iterations", "header_blocks",
		"header_memory_kib", "header_seconds", "header_method", "min_header_seconds", "max_header_seconds", "samples"})
	for _, k := range r.KDF {
		c.Write([]string{k.PRF, k.KDF, strconv.FormatFloat(k.IterationsPerSecond, 'f', -1, 64), k.Format,
			strconv.Itoa(k.PIM), strconv.Itoa(k.HeaderIterations), strconv.Itoa(k.HeaderBlocks),
			strconv.Itoa(k.HeaderMemoryKiB), strconv.FormatFloat(k.HeaderSeconds, 'f', 4, 64), k.HeaderMethod,
			strconv.FormatFloat(k.MinHeaderSeconds, 'f', 4, 64), strconv.FormatFloat(k.MaxHeaderSeconds, 'f', 4, 64), strconv.Itoa(k.Samples)})
	}
	c.Flush()
	return c.Error()
}

// WriteKDFTable writes the machine and the key-derivation results: each
// PRF's rate on one core and the time of one header derivation at pim.
func (r Report) WriteKDFTable(w io.Writer, pim int) {
	r.WriteMachine(w)
	fmt.Fprintf(w, "PIM %d; iterations per second on one core; header time with %d core(s)\n\n", pim, r.Threads)
	type row struct{ prf, rate, cost, time string }
	rows := []row{{"PRF", "Iterations/s", "One header derivation", "Time"}}
	for _, k := range r.KDF {
		rw := row{prf: k.PRF, rate: progress.GroupDigits(int64(k.IterationsPerSecond))}
		if k.KDF == "argon2id" {
			rw.rate = strconv.FormatFloat(k.IterationsPerSecond, 'f', 2, 64) + " passes"
			rw.cost = fmt.Sprintf("%d MiB, %d passes, 1 lane", k.HeaderMemoryKiB>>10, k.HeaderIterations)
		} else {
			rw.cost = fmt.Sprintf("%s iterations x %d blocks", progress.GroupDigits(int64(k.HeaderIterations)), k.HeaderBlocks)
		}
		if k.Format == "truecrypt" {
			rw.cost += " (TrueCrypt)"
		}
		how := map[string]string{
			MethodEstimated: "computed from the rate",
			MethodScaled:    fmt.Sprintf("scaled from %d MiB runs", k.ScaledFromKiB>>10),
			MethodMeasured:  "measured",
		}[k.HeaderMethod]
		sec := progress.FormatSeconds
		rw.time = sec(k.HeaderSeconds) + " (" + how + "; " + sec(k.MinHeaderSeconds) + " – " + sec(k.MaxHeaderSeconds) + ")"
		rows = append(rows, rw)
	}
	var wd [3]int
	for _, rw := range rows {
		wd[0], wd[1], wd[2] = max(wd[0], len(rw.prf)), max(wd[1], len(rw.rate)), max(wd[2], len(rw.cost))
	}
	for _, rw := range rows {
		fmt.Fprintf(w, "%-*s  %*s  %-*s  %s\n", wd[0], rw.prf, wd[1], rw.rate, wd[2], rw.cost, rw.time)
	}
}
