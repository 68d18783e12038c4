// Command armspeed measures cryptvol's ARM code paths against OpenSSL and
// Botan built for the same architecture, all run under qemu-user with the
// same CPU model, and prints a table of ratios.
//
// qemu's figures are a proxy only: it translates every guest instruction,
// NEON ones mostly into helper calls, so the ratios between two programs
// can differ from real hardware by a factor of 3-10 either way. Use them
// to see that a path is taken and roughly where it stands; measure on a
// Raspberry Pi for the real answer.
//
// Profiles (the CPU models and code paths):
//
//	armv6       qemu-arm -cpu arm1176 (Raspberry Pi 1, no NEON): cryptvol
//	            GOARM=6, Debian armel OpenSSL and Botan
//	armv6-tables  the same with CRYPTVOL_AES_TABLES=1: cryptvol's AES
//	            through lookup tables (not constant-time; an explicit choice)
//	armv7       qemu-arm -cpu cortex-a7 (NEON; Pi 2/3 on a 32-bit OS):
//	            cryptvol GOARM=7, Debian armhf OpenSSL and Botan
//	arm64       qemu-aarch64 -cpu cortex-a72 with the AES instructions masked
//	            (Pi 4): GODEBUG=cpu.aes=off, OPENSSL_armcap=1 (NEON only),
//	            botan --clear-cpuid=armv8aes
//	arm64-aes   the same CPU with its AES instructions
//
// Every figure is bytes per CPU second (the machines this runs on are
// shared): cryptvol's loop reads its thread's CPU time, `openssl speed`
// divides by user CPU time itself, and Botan's byte counts are divided by
// the CPU time of the emulator process (wait4's rusage). Each round runs
// every measurement once, alternating the programs; the best of -rounds
// counts. Sizes: 4 KiB buffers; XTS in 512-byte sectors for cryptvol
// (VeraCrypt's data unit) and one 4096-byte unit for openssl and botan.
//
// The guest programs come from Debian's packages, unpacked (not installed)
// under -roots; -setup fetches them (it runs dpkg --add-architecture and
// apt-get update for armel, armhf and arm64, then apt-get download).
//
//	go run ./internal/cmd/armspeed -setup
//	go run ./internal/cmd/armspeed [-rounds 3] [-seconds 1] [-profiles armv7,arm64]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

type profile struct {
	name, debArch, goarch, goarm string
	qemu, cpu                    string
	godebug, armcap, botanClear  string
	workerEnv                    string // more environment for cryptvol
	libdir                       string // the multiarch library directory in the root
}

var profiles = []profile{
	{name: "armv6", debArch: "armel", goarch: "arm", goarm: "6", qemu: "qemu-arm-static", cpu: "arm1176", libdir: "arm-linux-gnueabi"},
	{name: "armv6-tables", debArch: "armel", goarch: "arm", goarm: "6", qemu: "qemu-arm-static", cpu: "arm1176", libdir: "arm-linux-gnueabi",
		workerEnv: "CRYPTVOL_AES_TABLES=1"},
	{name: "armv7", debArch: "armhf", goarch: "arm", goarm: "7", qemu: "qemu-arm-static", cpu: "cortex-a7", libdir: "arm-linux-gnueabihf"},
	{name: "arm64", debArch: "arm64", goarch: "arm64", qemu: "qemu-aarch64-static", cpu: "cortex-a72",
		godebug: "cpu.aes=off", armcap: "1", botanClear: "armv8aes", libdir: "aarch64-linux-gnu"},
	{name: "arm64-aes", debArch: "arm64", goarch: "arm64", qemu: "qemu-aarch64-static", cpu: "cortex-a72", libdir: "aarch64-linux-gnu"},
}

// debs are the packages unpacked into each root: the two programs and
// what they link against.
var debs = []string{"openssl", "libssl3", "botan", "libbotan-2-19", "libc6", "libgcc-s1", "libstdc++6",
	"libbz2-1.0", "liblzma5", "libsqlite3-0", "libtspi1", "zlib1g", "libatomic1"}

type algorithm struct {
	name    string // cryptvol's name
	openssl string // openssl speed -evp
	botan   string // botan speed
}

var algorithms = []algorithm{
	{"AES", "aes-256-xts", "XTS(AES-256)"},
	{"Serpent", "", "XTS(Serpent)"},
	{"ChaCha20", "chacha20", "ChaCha(20)"},
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-worker" {
		worker(os.Args[2:])
		return
	}
	rounds := flag.Int("rounds", 3, "measuring rounds; the best of them counts")
	seconds := flag.Float64("seconds", 1, "seconds per measurement")
	roots := flag.String("roots", "/var/cache/cryptvol-armspeed", "directory of the unpacked Debian roots")
	setup := flag.Bool("setup", false, "fetch and unpack the Debian packages into -roots, then exit")
	only := flag.String("profiles", "armv6,armv6-tables,armv7,arm64,arm64-aes", "profiles to run")
	flag.Parse()
	if *setup {
		if err := setupRoots(*roots); err != nil {
			fatal(err)
		}
		return
	}
	var run []profile
	for _, name := range strings.Split(*only, ",") {
		found := false
		for _, p := range profiles {
			if p.name == name {
				run = append(run, p)
				found = true
			}
		}
		if !found {
			fatal(fmt.Errorf("unknown profile %q", name))
		}
	}
	tmp, err := os.MkdirTemp("", "armspeed")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	for _, p := range run {
		root := filepath.Join(*roots, p.debArch)
		if _, err := os.Stat(filepath.Join(root, "usr/bin/openssl")); err != nil {
			fatal(fmt.Errorf("no %s root in %s: run with -setup first", p.debArch, *roots))
		}
		if err := buildWorker(tmp, p); err != nil {
			fatal(err)
		}
	}
	// results[profile][tool+alg] = best bytes per CPU second (mean of the
	// directions); paths[profile][alg] = cryptvol's code path.
	results := map[string]map[string]float64{}
	paths := map[string]map[string]string{}
	keep := func(p, key string, v float64) {
		if results[p] == nil {
			results[p] = map[string]float64{}
		}
		results[p][key] = max(results[p][key], v)
	}
	for r := 0; r < *rounds; r++ {
		for _, p := range run {
			root := filepath.Join(*roots, p.debArch)
			fmt.Fprintf(os.Stderr, "round %d/%d: %s\n", r+1, *rounds, p.name)
			ours, impl, err := runWorker(tmp, p, *seconds)
			if err != nil {
				fatal(err)
			}
			paths[p.name] = impl
			for alg, v := range ours {
				keep(p.name, "cryptvol "+alg, v)
			}
			for _, a := range algorithms {
				if a.openssl == "" {
					continue
				}
				v, err := opensslSpeed(p, root, a, *seconds)
				if err != nil {
					fatal(err)
				}
				keep(p.name, "openssl "+a.name, v)
			}
			for _, a := range algorithms {
				v, err := botanSpeed(p, root, a, *seconds)
				if err != nil {
					fatal(err)
				}
				keep(p.name, "botan "+a.name, v)
			}
		}
	}
	fmt.Printf("cryptvol vs OpenSSL and Botan under qemu-user (a proxy: emulation distorts ratios 3-10x),\n")
	fmt.Printf("MB/s = 10^6 bytes per CPU second, mean of encrypt and decrypt, best of %d alternating rounds\n\n", *rounds)
	fmt.Printf("%-12s %-9s %-24s %9s %9s %7s %9s %7s\n", "profile", "cipher", "cryptvol path", "cryptvol", "OpenSSL", "ratio", "Botan", "ratio")
	note := false
	for _, p := range run {
		res := results[p.name]
		for _, a := range algorithms {
			path := paths[p.name][a.name]
			if short, _, cut := strings.Cut(path, " ("); cut {
				path, note = short+"*", true
			}
			ours := res["cryptvol "+a.name]
			ossl, botan := "-", "-"
			rossl, rbotan := "-", "-"
			if v, ok := res["openssl "+a.name]; ok && v > 0 {
				ossl, rossl = fmt.Sprintf("%.1f", v/1e6), fmt.Sprintf("%.2fx", ours/v)
			}
			if v, ok := res["botan "+a.name]; ok && v > 0 {
				botan, rbotan = fmt.Sprintf("%.1f", v/1e6), fmt.Sprintf("%.2fx", ours/v)
			}
			fmt.Printf("%-12s %-9s %-24s %9.1f %9s %7s %9s %7s\n", p.name, a.name, path, ours/1e6, ossl, rossl, botan, rbotan)
		}
	}
	if note {
		fmt.Println("\n* not constant-time: an explicit choice (CRYPTVOL_AES_TABLES=1), see cryptvol version")
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "armspeed:", err)
	os.Exit(1)
}

func setupRoots(dir string) error {
	seen := map[string]bool{}
	for _, p := range profiles {
		if seen[p.debArch] {
			continue
		}
		seen[p.debArch] = true
		if out, err := exec.Command("dpkg", "--add-architecture", p.debArch).CombinedOutput(); err != nil {
			return fmt.Errorf("dpkg --add-architecture %s: %v: %s", p.debArch, err, out)
		}
	}
	if out, err := exec.Command("apt-get", "update", "-qq").CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get update: %v: %s", err, out)
	}
	for arch := range seen {
		debDir := filepath.Join(dir, "debs", arch)
		if err := os.MkdirAll(debDir, 0o755); err != nil {
			return err
		}
		var names []string
		for _, d := range debs {
			names = append(names, d+":"+arch)
		}
		cmd := exec.Command("apt-get", append([]string{"download", "-qq"}, names...)...)
		cmd.Dir = debDir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get download (%s): %v: %s", arch, err, out)
		}
		files, _ := filepath.Glob(filepath.Join(debDir, "*.deb"))
		for _, f := range files {
			if out, err := exec.Command("dpkg", "-x", f, filepath.Join(dir, arch)).CombinedOutput(); err != nil {
				return fmt.Errorf("dpkg -x %s: %v: %s", f, err, out)
			}
		}
		fmt.Printf("%s: %d packages unpacked into %s\n", arch, len(files), filepath.Join(dir, arch))
	}
	return nil
}

func workerPath(tmp string, p profile) string {
	return filepath.Join(tmp, "worker-"+p.goarch+p.goarm)
}

func buildWorker(tmp string, p profile) error {
	out := workerPath(tmp, p)
	if _, err := os.Stat(out); err == nil {
		return nil
	}
	cmd := exec.Command("go", "build", "-o", out, "./internal/cmd/armspeed")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+p.goarch, "GOARM="+p.goarm)
	if o, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the %s worker: %v: %s", p.name, err, o)
	}
	return nil
}

// guest runs a program of the profile's architecture under qemu.
func guest(p profile, root string, extraEnv []string, args ...string) *exec.Cmd {
	qargs := []string{"-cpu", p.cpu}
	if root != "" {
		qargs = append(qargs, "-L", root)
	}
	cmd := exec.Command(p.qemu, append(qargs, args...)...)
	env := append(os.Environ(), extraEnv...)
	if root != "" {
		env = append(env, "LD_LIBRARY_PATH=/usr/lib/"+p.libdir+":/lib/"+p.libdir)
	}
	cmd.Env = env
	return cmd
}

var workerLine = regexp.MustCompile(`^(\S+) ([0-9.e+]+) (.+)$`)

func runWorker(tmp string, p profile, seconds float64) (map[string]float64, map[string]string, error) {
	var env []string
	if p.godebug != "" {
		env = append(env, "GODEBUG="+p.godebug)
	}
	if p.workerEnv != "" {
		env = append(env, p.workerEnv)
	}
	cmd := guest(p, "", env, workerPath(tmp, p), "-worker", strconv.FormatFloat(seconds, 'f', -1, 64))
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("%s worker: %v", p.name, err)
	}
	res, impl := map[string]float64{}, map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := workerLine.FindStringSubmatch(sc.Text()); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			res[m[1]], impl[m[1]] = v, m[3]
		}
	}
	if len(res) != len(algorithms) {
		return nil, nil, fmt.Errorf("%s worker printed %q", p.name, out)
	}
	return res, impl, nil
}

// opensslLine is openssl speed's count line (the time is user CPU time).
var opensslLine = regexp.MustCompile(`on (\d+) size blocks: (\d+) \S+ in ([0-9.]+)s`)

func opensslSpeed(p profile, root string, a algorithm, seconds float64) (float64, error) {
	var env []string
	if p.armcap != "" {
		env = append(env, "OPENSSL_armcap="+p.armcap)
	}
	sum := 0.0
	dirs := []bool{false, true}
	if a.name == "ChaCha20" {
		dirs = dirs[:1]
	}
	for _, decrypt := range dirs {
		args := []string{filepath.Join(root, "usr/bin/openssl"), "speed", "-seconds", strconv.Itoa(max(1, int(seconds+0.5))), "-bytes", "4096"}
		if decrypt {
			args = append(args, "-decrypt")
		}
		args = append(args, "-evp", a.openssl)
		cmd := guest(p, root, env, args...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = new(bytes.Buffer), &stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("%s openssl %s: %v: %s", p.name, a.openssl, err, stderr.String())
		}
		m := opensslLine.FindStringSubmatch(stderr.String())
		if m == nil {
			return 0, fmt.Errorf("%s: no count line in openssl output %q", p.name, stderr.String())
		}
		size, _ := strconv.ParseFloat(m[1], 64)
		count, _ := strconv.ParseFloat(m[2], 64)
		secs, _ := strconv.ParseFloat(m[3], 64)
		if secs <= 0 {
			return 0, nil // too little CPU time to measure: this round does not count
		}
		sum += size * count / secs
	}
	return sum / float64(len(dirs)), nil
}

var botanLine = regexp.MustCompile(`(?:encrypt|decrypt) buffer size \d+ bytes: .*\(([0-9.]+) MiB in [0-9.]+ ms\)`)

// botanSpeed divides the bytes botan reports, both directions, by the CPU
// time of the emulator process less its start-up.
func botanSpeed(p profile, root string, a algorithm, seconds float64) (float64, error) {
	// Start-up under emulation (loading and translating libbotan) takes a
	// noticeable part of a second of CPU: a run of 1 ms per direction
	// measures it, and it is taken off the real run's CPU time.
	_, startup, err := botanRun(p, root, a, 1)
	if err != nil {
		return 0, err
	}
	mib, cpu, err := botanRun(p, root, a, int(seconds*1000))
	if err != nil {
		return 0, err
	}
	if cpu -= startup; cpu <= 0 {
		return 0, nil // too little CPU time to measure: this round does not count
	}
	// Both directions ran for the same time, so bytes over time is the
	// mean of the two rates.
	return mib * (1 << 20) / cpu, nil
}

// botanRun returns the MiB botan reports processing and the CPU seconds
// of the emulator process.
func botanRun(p profile, root string, a algorithm, msec int) (float64, float64, error) {
	args := []string{filepath.Join(root, "usr/bin/botan"), "speed", fmt.Sprintf("--msec=%d", msec), "--buf-size=4096"}
	if p.botanClear != "" {
		args = append(args, "--clear-cpuid="+p.botanClear)
	}
	args = append(args, a.botan)
	cmd := guest(p, root, nil, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%s botan %s: %v: %s", p.name, a.botan, err, stderr.String())
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
	if lines == 0 {
		return 0, 0, fmt.Errorf("%s: no result lines in botan output %q", p.name, stdout.String())
	}
	return mib, (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), nil
}
