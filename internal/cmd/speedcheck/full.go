package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"time"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/internal/cputime"
	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/sector"
)

// fullChecks are the speed goals beyond the first floor: XTS scaling on two
// threads and PBKDF2 against cryptsetup's own benchmark.
func fullChecks(d time.Duration) (failed bool) {
	fmt.Printf("\nscaling: XTS on a 5 MiB buffer, wall time, best of 7 samples; goal >= 1.8x one thread\n")
	fmt.Printf("%-8s %12s %12s %7s\n", "cipher", "1 thread", "2 threads", "ratio")
	for _, name := range []string{"AES", "Serpent", "Twofish"} {
		one, err := measureWall(name, 1, d)
		if err != nil {
			fatal(err)
		}
		two, err := measureWall(name, 2, d)
		if err != nil {
			fatal(err)
		}
		verdict := "ok"
		if two/one < 1.8 {
			verdict, failed = "BELOW", true
		}
		fmt.Printf("%-8s %10.0f MB %10.0f MB %6.2fx  %s\n", name, one/1e6, two/1e6, two/one, verdict)
	}

	fmt.Printf("\npbkdf2: iterations per CPU second for a 256-bit key on one core, against `cryptsetup benchmark`; goal >= 1.0x\n")
	fmt.Printf("%-11s %12s %12s %7s\n", "PRF", "cryptvol", "cryptsetup", "ratio")
	for _, prf := range []struct{ ours, theirs string }{
		{"SHA-512", "sha512"}, {"SHA-256", "sha256"}, {"RIPEMD-160", "ripemd160"}, {"Whirlpool", "whirlpool"},
	} {
		ours, err := pbkdf2Rate(prf.ours, d)
		if err != nil {
			fatal(err)
		}
		theirs, err := cryptsetupRate(prf.theirs)
		if err != nil {
			fmt.Printf("%-11s %12.0f %12s %7s  SKIP (%v)\n", prf.ours, ours, "-", "-", err)
			continue
		}
		verdict := "ok"
		if ours/theirs < 1 {
			verdict, failed = "BELOW", true
		}
		fmt.Printf("%-11s %12.0f %12.0f %6.2fx  %s\n", prf.ours, ours, theirs, ours/theirs, verdict)
	}
	return failed
}

// measureWall returns XTS encryption bytes per wall-clock second over a
// 5 MiB buffer split over the given number of threads, the best of several
// samples (the machine may be shared: the best sample is the one least
// disturbed).
func measureWall(name string, threads int, d time.Duration) (float64, error) {
	c, err := ciphers.LookupChain(name)
	if err != nil {
		return 0, err
	}
	n, _ := sector.ChainKeySize(c)
	key := make([]byte, n)
	rand.Read(key)
	m, err := sector.ChainXTS(c, key, sectorSize)
	if err != nil {
		return 0, err
	}
	m = sector.Parallel(m, threads)
	buf := make([]byte, 5<<20)
	m.Encrypt(buf, buf, 0)
	best := 0.0
	for s := 0; s < 7; s++ {
		start := time.Now()
		var bytes float64
		for time.Since(start) < d/7 {
			m.Encrypt(buf, buf, 0)
			bytes += float64(len(buf))
		}
		if r := bytes / time.Since(start).Seconds(); r > best {
			best = r
		}
	}
	return best, nil
}

// pbkdf2Rate measures iterations per CPU second of the whole process
// deriving a 32-byte key (the same basis as cryptsetup's figure, which
// getrusage measures too).
func pbkdf2Rate(prf string, d time.Duration) (float64, error) {
	h, err := hashes.Lookup(prf)
	if err != nil {
		return 0, err
	}
	const iter = 100000
	kdf.PBKDF2(h, []byte("password"), make([]byte, 32), 1000, 32) // warm-up
	cpu0 := cputime.ProcessSeconds()
	start := time.Now()
	n := 0
	for time.Since(start) < d || n == 0 {
		kdf.PBKDF2(h, []byte("password"), make([]byte, 32), iter, 32)
		n++
	}
	cpu := cputime.ProcessSeconds() - cpu0
	if cpu <= 0 {
		cpu = time.Since(start).Seconds()
	}
	return float64(n*iter) / cpu, nil
}

var cryptsetupLine = regexp.MustCompile(`PBKDF2-\S+\s+(\d+) iterations per second`)

// cryptsetupRate runs `cryptsetup benchmark --pbkdf pbkdf2 --hash H`.
func cryptsetupRate(hash string) (float64, error) {
	if _, err := exec.LookPath("cryptsetup"); err != nil {
		return 0, errMissing{"cryptsetup"}
	}
	var out bytes.Buffer
	cmd := exec.Command("cryptsetup", "benchmark", "--pbkdf", "pbkdf2", "--hash", hash)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("cryptsetup: %v: %s", err, out.String())
	}
	m := cryptsetupLine.FindStringSubmatch(out.String())
	if m == nil {
		return 0, fmt.Errorf("no rate in cryptsetup's output: %q", out.String())
	}
	return strconv.ParseFloat(m[1], 64)
}
