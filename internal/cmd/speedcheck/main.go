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
// With -profiles it measures instead the table of issue 18: AES, Serpent,
// Twofish, Camellia and Kuznyechik XTS under five x86 CPU profiles made on
// this machine by masking features the same way for every side (sse2: SSE2
// only, an N54L; aesni: AES-NI and SSSE3 without AVX, Westmere; avx2: AVX2
// without AVX-512 or VAES, Haswell to Comet Lake; avx2vaes: AVX2 and VAES
// without AVX-512, Zen 3 and Alder Lake; full). cryptvol runs in a child
// process with GODEBUG set (golang.org/x/sys/cpu reads it at start-up),
// OpenSSL with OPENSSL_ia32cap, botan with --clear-cpuid; each round
// measures every cell with cryptvol and its peers one after another, and
// the best of -rounds rounds of each side counts. It prints the ratios to
// the best peer, the figures, the code paths taken and the masks, and
// exits 1 if a cell misses its goal (1.0, and 1.5 for Serpent on SSE2):
//
//	go run ./internal/cmd/speedcheck -profiles [-profile sse2,aesni] [-ciphers AES,Serpent] [-rounds 3] [-seconds 0.5]
//
// -godebug NAME prints a profile's GODEBUG mask (for .ci/run).
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
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/internal/cputime"
	"github.com/cryptvol/cryptvol/sector"
)

const bufSize = 4096

// sectorSize is cryptvol's XTS data unit: VeraCrypt's 512 bytes (8 tweaks
// per 4 KiB buffer) unless -unit says otherwise (4096: LUKS2's default,
// one tweak per buffer like openssl speed).
var sectorSize = 512

func main() {
	seconds := flag.Float64("seconds", 2, "measuring time per algorithm and direction")
	floor := flag.Float64("floor", 0.5, "minimum ratio cryptvol/reference")
	require := flag.Bool("require-tools", false, "fail instead of skipping when openssl or botan is missing")
	full := flag.Bool("full", false, "also check two-thread scaling and PBKDF2 against cryptsetup benchmark")
	profiled := flag.Bool("profiles", false, "measure every cipher under every x86 CPU profile (features masked) against openssl and botan, and print the table")
	only := flag.String("profile", "", "with -profiles: only these profiles, comma-separated (sse2, aesni, avx2, avx2vaes, full)")
	rounds := flag.Int("rounds", 3, "with -profiles or -unlock: alternating rounds; the best figure of each side counts")
	onlyCiphers := flag.String("ciphers", "", "with -profiles: only these ciphers, comma-separated (AES, Serpent, Twofish, Camellia, Kuznyechik)")
	child := flag.String(childFlag, "", "internal: measure one cipher in this process and print one line")
	flag.IntVar(&sectorSize, "unit", 512, "cryptvol's XTS data unit in bytes (512 as VeraCrypt, 4096 as LUKS2)")
	godebug := flag.String("godebug", "", "print the GODEBUG value of a profile (sse2, aesni, avx2, avx2vaes, full) and exit")
	unlock := flag.Bool("unlock", false, "only time unlocking against VeraCrypt 1.26.24 (issue 16's table) and ls after cryptvol unlock")
	busy := flag.Int("busy", 2, "with -unlock: CPU-bound processes beside both sides in the loaded runs")
	spin := flag.Bool("busy-loop", false, "internal: be one of those CPU-bound processes")
	flag.Parse()
	if *godebug != "" {
		p, ok := profileByName(*godebug)
		if !ok {
			fatal(fmt.Errorf("unknown profile %q (want %s)", *godebug, strings.Join(profileNames(), ", ")))
		}
		fmt.Println(p.godebug)
		return
	}
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
	if *child != "" {
		childMeasure(*child, d)
		return
	}
	if *profiled {
		var list []string
		if *only != "" {
			list = strings.Split(*only, ",")
		}
		var cs []string
		if *onlyCiphers != "" {
			cs = strings.Split(*onlyCiphers, ",")
		}
		if runProfiles(list, cs, *rounds, d, max(1, int(*seconds+0.5))) {
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
	cpu0, wall0 := cputime.ThreadSeconds(), time.Now()
	var calls uint64
	for time.Since(wall0) < d {
		for range 256 {
			op(buf, buf, calls)
			calls++
		}
	}
	cpu := cputime.ThreadSeconds() - cpu0
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
	return opensslRun("aes-256-xts", "", decrypt, max(1, int(seconds+0.5)), nil)
}

// botanLine is one of botan speed's result lines, e.g.
// "Serpent/XTS encrypt buffer size 4096 bytes: 321.531 MiB/sec 7.66 cycles/byte (643.06 MiB in 2000.00 ms)".
var botanLine = regexp.MustCompile(`(?:encrypt|decrypt) buffer size \d+ bytes: .*\(([0-9.]+) MiB in [0-9.]+ ms\)`)

// botanSpeed returns the bytes botan's XTS(name) benchmark processed in
// both directions divided by the botan process's CPU time.
func botanSpeed(name string, seconds float64) (float64, error) {
	return botanRun("XTS("+name+")", time.Duration(seconds*float64(time.Second)), "")
}
