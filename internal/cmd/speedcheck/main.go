// Command speedcheck measures cryptvol's single-threaded XTS speed on a
// 4 KiB buffer against the reference implementations installed on the
// machine, in one run, and checks the project's speed floor:
//
//	AES-XTS      >= 0.5 x `openssl speed -evp aes-256-xts` (encrypt, and
//	                decrypt with -decrypt)
//	Serpent-XTS  >= 0.5 x `botan speed 'XTS(Serpent)'`
//	Twofish-XTS  >= 0.5 x `botan speed 'XTS(Twofish)'`
//
// Every figure is bytes per second of CPU time, not of wall time, because
// the machines this runs on are shared and busy: a process that is
// descheduled loses wall time but not CPU time. `openssl speed` reports its
// count over user CPU time by default; botan prints wall-clock rates, so
// speedcheck adds up the bytes botan reports and divides by the CPU time
// (user+system, from wait4's rusage) of the botan process, which covers the
// timed loops plus start-up and a key-schedule test (milliseconds in a
// multi-second run). cryptvol's own loop runs on one locked OS thread and
// reads that thread's CPU time.
//
// Usage:
//
//	go run ./internal/cmd/speedcheck [-seconds 2] [-floor 0.5] [-require-tools] [-full]
//	go run ./internal/cmd/speedcheck -unlock [-rounds 3] [-busy 2]
//
// With -full it also checks that XTS on two threads over a 5 MiB buffer
// runs at least 1.8x one thread (AES, Serpent, Twofish; wall time, best
// sample) and that PBKDF2 iterations per CPU second for a 256-bit key are
// at least what `cryptsetup benchmark` prints for SHA-512, SHA-256,
// RIPEMD-160 and Whirlpool.
//
// With -unlock it only times unlocking against VeraCrypt 1.26.24 (see
// unlockChecks): right and wrong passwords on an AES/SHA-512 and an
// AES/Streebog volume, quiet and beside busy processes, and `ls` after
// `cryptvol unlock`.
//
// It exits 1 when a ratio is below the floor, 2 on a usage or tool error,
// and reports SKIP (exit 0, unless -require-tools) for a missing tool.
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/sector"
)

const (
	bufSize    = 4096
	sectorSize = 512 // VeraCrypt's data unit: 8 tweaks per 4 KiB buffer
)

func main() {
	seconds := flag.Float64("seconds", 2, "measuring time per algorithm and direction")
	floor := flag.Float64("floor", 0.5, "minimum ratio cryptvol/reference")
	require := flag.Bool("require-tools", false, "fail instead of skipping when openssl or botan is missing")
	full := flag.Bool("full", false, "also check two-thread scaling and PBKDF2 against cryptsetup benchmark")
	unlock := flag.Bool("unlock", false, "only time unlocking against VeraCrypt 1.26.24 (issue 16's table) and ls after cryptvol unlock")
	rounds := flag.Int("rounds", 3, "with -unlock: runs of each side, alternating; the best counts")
	busy := flag.Int("busy", 2, "with -unlock: CPU-bound processes beside both sides in the loaded runs")
	spin := flag.Bool("busy-loop", false, "internal: be one of those CPU-bound processes")
	flag.Parse()
	d := time.Duration(*seconds * float64(time.Second))
	if *spin {
		busyLoop()
	}
	if *unlock {
		if unlockChecks(*rounds, *busy) {
			os.Exit(1)
		}
		return
	}

	fmt.Printf("speedcheck: one thread, %d-byte buffer, XTS (cryptvol with %d-byte data units); MB = 10^6 bytes per CPU second\n",
		bufSize, sectorSize)
	fmt.Printf("%-8s %-9s %12s %12s  %-8s %6s  %s\n", "cipher", "direction", "cryptvol", "reference", "tool", "ratio", "floor")
	failed, missing := false, false
	report := func(cipher, dir string, ours, ref float64, tool string, err error) {
		switch {
		case err != nil && isMissing(err):
			missing = true
			fmt.Printf("%-8s %-9s %12.0f %12s  %-8s %6s  SKIP (%v)\n", cipher, dir, ours/1e6, "-", tool, "-", err)
		case err != nil:
			failed = true
			fmt.Printf("%-8s %-9s %12.0f %12s  %-8s %6s  ERROR (%v)\n", cipher, dir, ours/1e6, "-", tool, "-", err)
		default:
			ratio := ours / ref
			verdict := "ok"
			if ratio < *floor {
				verdict, failed = "BELOW", true
			}
			fmt.Printf("%-8s %-9s %12.0f %12.0f  %-8s %6.2f  %s %.2f\n", cipher, dir, ours/1e6, ref/1e6, tool, ratio, verdict, *floor)
		}
	}

	for _, dir := range []string{"encrypt", "decrypt"} {
		ours, err := measureOurs("AES", dir == "decrypt", d)
		if err != nil {
			fatal(err)
		}
		ref, err := opensslSpeed(dir == "decrypt", *seconds)
		report("AES", dir, ours, ref, "openssl", err)
	}
	for _, name := range []string{"Serpent", "Twofish"} {
		enc, err := measureOurs(name, false, d)
		if err != nil {
			fatal(err)
		}
		dec, err := measureOurs(name, true, d)
		if err != nil {
			fatal(err)
		}
		// botan measures both directions in one process; compare the
		// same mix: equal byte counts at the two rates.
		ours := 2 / (1/enc + 1/dec)
		ref, err := botanSpeed(name, *seconds)
		report(name, "enc+dec", ours, ref, "botan", err)
	}
	if *full && fullChecks(d) {
		failed = true
	}
	switch {
	case failed:
		os.Exit(1)
	case missing && *require:
		os.Exit(2)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "speedcheck:", err)
	os.Exit(2)
}

// errMissing marks a reference tool that is not installed.
type errMissing struct{ tool string }

func (e errMissing) Error() string { return e.tool + " not found" }

func isMissing(err error) bool { _, ok := err.(errMissing); return ok }

// measureOurs returns cryptvol's XTS bytes per CPU second for one cipher,
// one direction, on one locked thread.
func measureOurs(name string, decrypt bool, d time.Duration) (float64, error) {
	c, err := ciphers.LookupChain(name)
	if err != nil {
		return 0, err
	}
	n, err := sector.ChainKeySize(c)
	if err != nil {
		return 0, err
	}
	key := make([]byte, n)
	rand.Read(key)
	m, err := sector.ChainXTS(c, key, sectorSize)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, bufSize)
	rand.Read(buf)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	op := m.Encrypt
	if decrypt {
		op = m.Decrypt
	}
	for i := range 1000 { // warm-up: pools, caches, frequency
		op(buf, buf, uint64(i))
	}
	cpu0, wall0 := threadCPUTime(), time.Now()
	var calls uint64
	for time.Since(wall0) < d {
		for range 256 {
			op(buf, buf, calls)
			calls++
		}
	}
	cpu := threadCPUTime() - cpu0
	if cpu <= 0 { // no CPU clock on this system: fall back to wall time
		cpu = time.Since(wall0).Seconds()
	}
	return float64(calls) * bufSize / cpu, nil
}

// opensslLine is openssl speed's count line on stderr, e.g.
// "Doing AES-256-XTS for 2s on 4096 size blocks: 3954494 AES-256-XTS's in 2.00s";
// the final time is user CPU time unless -elapsed is given.
var opensslLine = regexp.MustCompile(`on (\d+) size blocks: (\d+) \S+ in ([0-9.]+)s`)

// opensslSpeed returns openssl's AES-256-XTS bytes per CPU second.
func opensslSpeed(decrypt bool, seconds float64) (float64, error) {
	if _, err := exec.LookPath("openssl"); err != nil {
		return 0, errMissing{"openssl"}
	}
	args := []string{"speed", "-seconds", strconv.Itoa(max(1, int(seconds+0.5))), "-bytes", strconv.Itoa(bufSize)}
	if decrypt {
		args = append(args, "-decrypt")
	}
	args = append(args, "-evp", "aes-256-xts")
	var stderr bytes.Buffer
	cmd := exec.Command("openssl", args...)
	cmd.Stdout, cmd.Stderr = new(bytes.Buffer), &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("openssl %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	m := opensslLine.FindStringSubmatch(stderr.String())
	if m == nil {
		return 0, fmt.Errorf("no count line in openssl output: %q", stderr.String())
	}
	size, _ := strconv.ParseFloat(m[1], 64)
	count, _ := strconv.ParseFloat(m[2], 64)
	secs, _ := strconv.ParseFloat(m[3], 64)
	if secs <= 0 {
		return 0, fmt.Errorf("openssl reported %gs", secs)
	}
	return size * count / secs, nil
}

// botanLine is one of botan speed's result lines, e.g.
// "Serpent/XTS encrypt buffer size 4096 bytes: 321.531 MiB/sec 7.66 cycles/byte (643.06 MiB in 2000.00 ms)".
var botanLine = regexp.MustCompile(`(?:encrypt|decrypt) buffer size \d+ bytes: .*\(([0-9.]+) MiB in [0-9.]+ ms\)`)

// botanSpeed returns the bytes botan's XTS(name) benchmark processed in
// both directions divided by the botan process's CPU time.
func botanSpeed(name string, seconds float64) (float64, error) {
	if _, err := exec.LookPath("botan"); err != nil {
		return 0, errMissing{"botan"}
	}
	args := []string{"speed", fmt.Sprintf("--msec=%d", int(seconds*1000)), fmt.Sprintf("--buf-size=%d", bufSize), "XTS(" + name + ")"}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("botan", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("botan %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	var mib float64
	lines := 0
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if m := botanLine.FindStringSubmatch(sc.Text()); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			mib += v
			lines++
		}
	}
	if lines != 2 {
		return 0, fmt.Errorf("found %d encrypt/decrypt lines in botan output, want 2: %q", lines, stdout.String())
	}
	cpu := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	if cpu <= 0 {
		return 0, fmt.Errorf("no CPU time for the botan process")
	}
	return mib * (1 << 20) / cpu, nil
}
