package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/ciphers"
)

// A cpuProfile is a class of x86 CPU our users own, reproduced on a bigger
// CPU by masking features the same way for every side: GODEBUG for
// cryptvol (golang.org/x/sys/cpu reads it at start-up), OPENSSL_ia32cap for
// OpenSSL, --clear-cpuid for botan.
type cpuProfile struct {
	name, desc string
	// godebug masks golang.org/x/sys/cpu. It uses only names x/sys knows;
	// "avx512vaes" and "avx512vpclmulqdq" are x/sys's names for the VAES
	// and VPCLMULQDQ CPUID bits, which ciphers/aes also reads for its
	// 256-bit VAES path (the Go runtime, which has no such options,
	// prints "unknown cpu feature" for them and carries on).
	godebug string
	// ia32cap is OPENSSL_ia32cap: "~A:~B" clears bits of A = CPUID(1)
	// ECX:EDX and B = CPUID(7) ECX:EBX.
	ia32cap string
	// botanClear is botan speed's --clear-cpuid list (botan cpuid's names).
	botanClear string
}

const (
	// AVX-512 and what comes with it, by x/sys/cpu's names.
	godebugNoAVX512 = "cpu.avx512f=off,cpu.avx512cd=off,cpu.avx512bw=off,cpu.avx512dq=off,cpu.avx512vl=off," +
		"cpu.avx512ifma=off,cpu.avx512vbmi=off,cpu.avx512vbmi2=off,cpu.avx512gfni=off,cpu.avx512vnni=off," +
		"cpu.avx512bitalg=off,cpu.avx512vpopcntdq=off,cpu.avx512bf16=off"
	godebugNoVAES = "cpu.avx512vaes=off,cpu.avx512vpclmulqdq=off"
	// CPUID(7) EBX: AVX512F, DQ, IFMA, PF, ER, CD, BW, VL.
	ebx7AVX512 = 1<<16 | 1<<17 | 1<<21 | 1<<26 | 1<<27 | 1<<28 | 1<<30 | 1<<31
	// CPUID(7) ECX: VBMI, VBMI2, GFNI, VNNI, BITALG, VPOPCNTDQ (AVX-512
	// additions), and VAES, VPCLMULQDQ.
	ecx7AVX512 = 1<<1 | 1<<6 | 1<<8 | 1<<11 | 1<<12 | 1<<14
	ecx7VAES   = 1<<9 | 1<<10
	// CPUID(1) ECX: FMA, OSXSAVE, AVX, F16C (everything AVX).
	ecx1AVX = 1<<12 | 1<<27 | 1<<28 | 1<<29
)

var profiles = []cpuProfile{
	{
		name: "sse2", desc: "SSE2 only (N54L class)",
		godebug:    "cpu.all=off",
		ia32cap:    "~0xffffffff00000000:~0xffffffffffffffff",
		botanClear: "ssse3,sse41,sse42,avx2,avx512f,avx512_icelake,bmi1,bmi2,adx,aes_ni,clmul,intel_sha,avx512_aes,avx512_clmul",
	},
	{
		name: "aesni", desc: "AES-NI + SSSE3, no AVX (Westmere class)",
		godebug:    "cpu.avx=off,cpu.avx2=off,cpu.fma=off,cpu.f16c=off,cpu.bmi1=off,cpu.bmi2=off,cpu.adx=off,cpu.osxsave=off," + godebugNoAVX512 + "," + godebugNoVAES,
		ia32cap:    fmt.Sprintf("~0x%x:~0xffffffffffffffff", uint64(ecx1AVX)<<32),
		botanClear: "avx2,avx512f,avx512_icelake,bmi1,bmi2,adx,intel_sha,avx512_aes,avx512_clmul",
	},
	{
		name: "avx2", desc: "AVX2, no AVX-512, no VAES (Haswell to Comet Lake)",
		godebug:    godebugNoAVX512 + "," + godebugNoVAES,
		ia32cap:    fmt.Sprintf("~0x0:~0x%x", uint64(ecx7AVX512|ecx7VAES)<<32|ebx7AVX512),
		botanClear: "avx512f,avx512_icelake,avx512_aes,avx512_clmul",
	},
	{
		name: "avx2vaes", desc: "AVX2 + VAES, no AVX-512 (Zen 3, Alder Lake)",
		godebug:    godebugNoAVX512,
		ia32cap:    fmt.Sprintf("~0x0:~0x%x", uint64(ecx7AVX512)<<32|ebx7AVX512),
		botanClear: "avx512f,avx512_icelake,avx512_aes,avx512_clmul",
	},
	{name: "full", desc: "everything this CPU has"},
}

func profileByName(name string) (cpuProfile, bool) {
	for _, p := range profiles {
		if p.name == name {
			return p, true
		}
	}
	return cpuProfile{}, false
}

func profileNames() []string {
	var out []string
	for _, p := range profiles {
		out = append(out, p.name)
	}
	return out
}

// A peer is one reference measurement for a cipher.
type peer struct {
	tool string // "openssl", "botan"
	alg  string // openssl -evp name or botan algorithm
	mode string // "XTS", or "ECB" where the tool has no XTS for the cipher
	// provider, if set, is an OpenSSL provider to load (gostprov).
	provider string
}

type tableCipher struct {
	name  string
	peers []peer
}

var tableCiphers = []tableCipher{
	{"AES", []peer{{tool: "openssl", alg: "aes-256-xts", mode: "XTS"}, {tool: "botan", alg: "AES-256/XTS", mode: "XTS"}}},
	{"Serpent", []peer{{tool: "botan", alg: "Serpent/XTS", mode: "XTS"}}},
	{"Twofish", []peer{{tool: "botan", alg: "Twofish/XTS", mode: "XTS"}}},
	// OpenSSL has no Camellia-XTS; its ECB (no tweak work at all) is the
	// peer's best case.
	{"Camellia", []peer{{tool: "openssl", alg: "camellia-256-ecb", mode: "ECB"}, {tool: "botan", alg: "Camellia-256/XTS", mode: "XTS"}}},
	// botan 2 has no Kuznyechik; the GOST provider for OpenSSL 3
	// (libengine-gost-openssl) has ECB, not XTS.
	{"Kuznyechik", []peer{{tool: "openssl", alg: "kuznyechik-ecb", mode: "ECB", provider: "gostprov"}}},
}

// cell is the best figure seen for one side of one table cell: bytes per
// CPU second, the harmonic mean of encryption and decryption (the same
// byte count at both rates).
type cell struct {
	ours, peer float64
	peerName   string
	path       string
	peerErr    error
}

// runProfiles measures every cipher of the table under every profile,
// rounds times, alternating cryptvol and its peers in each round, keeps
// the best figure of each side and prints the table. It reports whether a
// goal was missed.
func runProfiles(only, onlyCiphers []string, rounds int, d time.Duration, opensslSeconds int) (failed bool) {
	self, err := os.Executable()
	if err != nil {
		fatal(err)
	}
	var profs []cpuProfile
	for _, p := range profiles {
		if len(only) == 0 || contains(only, p.name) {
			profs = append(profs, p)
		}
	}
	if len(profs) == 0 {
		fatal(fmt.Errorf("no profile matches %q", only))
	}
	var table []tableCipher
	for _, tc := range tableCiphers {
		if len(onlyCiphers) == 0 || contains(onlyCiphers, tc.name) {
			table = append(table, tc)
		}
	}
	if len(table) == 0 {
		fatal(fmt.Errorf("no cipher matches %q", onlyCiphers))
	}
	best := map[[2]string]*cell{}
	for r := 0; r < rounds; r++ {
		for _, p := range profs {
			for _, tc := range table {
				fmt.Fprintf(os.Stderr, "\rround %d/%d: %-8s %-10s", r+1, rounds, p.name, tc.name)
				key := [2]string{p.name, tc.name}
				c := best[key]
				if c == nil {
					c = &cell{}
					best[key] = c
				}
				ours, path, err := measureChild(self, p, tc.name, d)
				if err != nil {
					fatal(err)
				}
				c.ours = max(c.ours, ours)
				c.path = path
				for _, pe := range tc.peers {
					v, err := measurePeer(pe, p, d, opensslSeconds)
					if err != nil {
						if c.peer == 0 {
							c.peerErr = err
						}
						continue
					}
					if v > c.peer {
						c.peer, c.peerName, c.peerErr = v, pe.tool+" "+pe.mode, nil
					}
				}
			}
		}
	}
	fmt.Fprintf(os.Stderr, "\r%60s\r", "")

	fmt.Printf("cryptvol XTS (%d-byte data units) on %d-byte buffers, one thread, against the best peer with the same CPU features masked;\n", sectorSize, bufSize)
	fmt.Printf("ratio of bytes per CPU second, encryption and decryption together, best of %d alternating rounds\n\n", rounds)
	fmt.Printf("| %-46s |", "CPU profile")
	for _, tc := range table {
		fmt.Printf(" %-10s |", tc.name)
	}
	fmt.Printf("\n|%s|", strings.Repeat("-", 48))
	for range table {
		fmt.Printf("%s|", strings.Repeat("-", 12))
	}
	fmt.Println()
	for _, p := range profs {
		fmt.Printf("| %-46s |", p.desc)
		for _, tc := range table {
			c := best[[2]string{p.name, tc.name}]
			goal := goalFor(p.name, tc.name)
			switch {
			case c.peer == 0:
				fmt.Printf(" %-10s |", "-")
			default:
				mark := ""
				if c.ours/c.peer < goal {
					mark, failed = "!", true
				}
				fmt.Printf(" %-10s |", fmt.Sprintf("%.2f%s", c.ours/c.peer, mark))
			}
		}
		fmt.Println()
	}
	fmt.Printf("\ngoal: every cell >= 1.00, Serpent on SSE2 only >= 1.50; ! marks a miss, - a cell with no peer installed\n\n")

	fmt.Printf("%-9s %-11s %10s %10s  %-13s  %s\n", "profile", "cipher", "cryptvol", "peer", "peer", "cryptvol code path")
	for _, p := range profs {
		for _, tc := range table {
			c := best[[2]string{p.name, tc.name}]
			peerMB, peerName := "-", "-"
			if c.peer > 0 {
				peerMB, peerName = fmt.Sprintf("%.0f", c.peer/1e6), c.peerName
			} else if c.peerErr != nil {
				peerName = c.peerErr.Error()
			}
			fmt.Printf("%-9s %-11s %10.0f %10s  %-13s  %s\n", p.name, tc.name, c.ours/1e6, peerMB, peerName, c.path)
		}
	}
	fmt.Printf("(MB = 10^6 bytes per CPU second)\n\nmasks:\n")
	for _, p := range profs {
		if p.godebug == "" {
			continue
		}
		fmt.Printf("  %s: GODEBUG=%s\n    OPENSSL_ia32cap=%s; botan --clear-cpuid=%s\n", p.name, p.godebug, p.ia32cap, p.botanClear)
	}
	return failed
}

func goalFor(profile, cipher string) float64 {
	if profile == "sse2" && cipher == "Serpent" {
		return 1.5
	}
	return 1.0
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// childFlag makes speedcheck measure one cipher and print the result: it
// runs as a child so that GODEBUG reaches golang.org/x/sys/cpu, which reads
// it once at start-up.
const childFlag = "measure-child"

var childLine = regexp.MustCompile(`^enc=([0-9.e+]+) dec=([0-9.e+]+) path=(.*)$`)

func measureChild(self string, p cpuProfile, cipher string, d time.Duration) (float64, string, error) {
	cmd := exec.Command(self, "-"+childFlag, cipher, "-seconds", strconv.FormatFloat(d.Seconds(), 'f', -1, 64), "-unit", strconv.Itoa(sectorSize))
	cmd.Env = append(os.Environ(), "GODEBUG="+p.godebug)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, "", fmt.Errorf("measuring %s under %s: %v: %s", cipher, p.name, err, stderr.String())
	}
	m := childLine.FindStringSubmatch(strings.TrimSpace(stdout.String()))
	if m == nil {
		return 0, "", fmt.Errorf("measuring %s under %s: unexpected output %q", cipher, p.name, stdout.String())
	}
	enc, _ := strconv.ParseFloat(m[1], 64)
	dec, _ := strconv.ParseFloat(m[2], 64)
	return 2 / (1/enc + 1/dec), m[3], nil
}

// childMeasure is the child's side: both directions, one line of output.
func childMeasure(cipher string, d time.Duration) {
	enc, err := measureOurs(cipher, false, d)
	if err != nil {
		fatal(err)
	}
	dec, err := measureOurs(cipher, true, d)
	if err != nil {
		fatal(err)
	}
	spec, err := ciphers.Lookup(cipher)
	if err != nil {
		fatal(err)
	}
	fmt.Printf("enc=%g dec=%g path=%s\n", enc, dec, spec.Implementation())
}

func measurePeer(pe peer, p cpuProfile, d time.Duration, opensslSeconds int) (float64, error) {
	switch pe.tool {
	case "openssl":
		env := []string{}
		if p.ia32cap != "" {
			env = append(env, "OPENSSL_ia32cap="+p.ia32cap)
		}
		enc, err := opensslRun(pe.alg, pe.provider, false, opensslSeconds, env)
		if err != nil {
			return 0, err
		}
		dec, err := opensslRun(pe.alg, pe.provider, true, opensslSeconds, env)
		if err != nil {
			return 0, err
		}
		return 2 / (1/enc + 1/dec), nil
	case "botan":
		return botanRun(pe.alg, d, p.botanClear)
	}
	return 0, fmt.Errorf("unknown tool %q", pe.tool)
}

// opensslRun is opensslSpeed for any EVP cipher, with an environment
// (OPENSSL_ia32cap) and optionally a provider.
func opensslRun(alg, provider string, decrypt bool, seconds int, env []string) (float64, error) {
	if _, err := exec.LookPath("openssl"); err != nil {
		return 0, errMissing{"openssl"}
	}
	args := []string{"speed", "-seconds", strconv.Itoa(seconds), "-bytes", strconv.Itoa(bufSize)}
	if provider != "" {
		args = append(args, "-provider", provider, "-provider", "default")
	}
	if decrypt {
		args = append(args, "-decrypt")
	}
	args = append(args, "-evp", alg)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("openssl", args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if provider != "" {
			return 0, errMissing{"openssl provider " + provider}
		}
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

// botanRun is botanSpeed for an algorithm spelled the botan way
// ("Serpent/XTS"), with --clear-cpuid.
func botanRun(alg string, d time.Duration, clear string) (float64, error) {
	if _, err := exec.LookPath("botan"); err != nil {
		return 0, errMissing{"botan"}
	}
	args := []string{"speed", fmt.Sprintf("--msec=%d", d.Milliseconds()), fmt.Sprintf("--buf-size=%d", bufSize)}
	if clear != "" {
		args = append(args, "--clear-cpuid="+clear)
	}
	args = append(args, alg)
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
