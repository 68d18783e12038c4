// Package platform reports what machine this is: OS, architecture, CPU model
// and the instruction-set features the fast code paths use. The benchmark
// header and `cryptvol version` print it.
package platform

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"

	"github.com/cryptvol/cryptvol/kdf"
)

// Info describes the running machine.
type Info struct {
	GOOS   string   `json:"goos"`
	GOARCH string   `json:"goarch"`
	CPU    string   `json:"cpu"`
	Cores  int      `json:"cores"`
	AESHW  bool     `json:"aes_hw"`
	Flags  []string `json:"features"`
}

// Detect reads the CPU model (where the OS exposes it) and feature flags.
func Detect() Info {
	in := Info{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPU: cpuModel(), Cores: runtime.NumCPU()}
	add := func(ok bool, name string) {
		if ok {
			in.Flags = append(in.Flags, name)
		}
	}
	switch runtime.GOARCH {
	case "amd64", "386":
		in.AESHW = cpu.X86.HasAES
		add(cpu.X86.HasAES, "AES-NI")
		add(cpu.X86.HasPCLMULQDQ, "PCLMULQDQ")
		add(cpu.X86.HasSSSE3, "SSSE3")
		add(cpu.X86.HasAVX2, "AVX2")
		add(cpu.X86.HasAVX512F, "AVX512F")
		add(cpu.X86.HasAVX512VAES, "VAES")
		add(cpu.X86.HasAVX512VPCLMULQDQ, "VPCLMULQDQ")
		add(cpu.X86.HasAVX512GFNI, "GFNI")
		// SHA-NI: from the test that chooses the PBKDF2-SHA-256 kernels.
		in.Flags = append(in.Flags, kdf.CPUFeatures()...)
	case "arm64":
		in.AESHW = cpu.ARM64.HasAES
		add(cpu.ARM64.HasAES, "AES")
		add(cpu.ARM64.HasPMULL, "PMULL")
		add(cpu.ARM64.HasSHA2, "SHA2")
		add(cpu.ARM64.HasSHA512, "SHA512")
		add(cpu.ARM64.HasASIMD, "NEON")
	case "arm":
		add(cpu.ARM.HasNEON, "NEON")
		add(cpu.ARM.HasAES, "AES")
		add(cpu.ARM.HasPMULL, "PMULL")
		in.AESHW = cpu.ARM.HasAES
	case "s390x":
		in.AESHW = cpu.S390X.HasAES
		add(cpu.S390X.HasAES, "CPACF-AES")
	case "ppc64", "ppc64le":
		in.AESHW = cpu.PPC64.IsPOWER8
		add(cpu.PPC64.IsPOWER8, "POWER8-crypto")
	}
	return in
}

// cpuModel returns the model name from /proc/cpuinfo, or "unknown".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name", "Model", "cpu model", "Processor":
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
	}
	return "unknown"
}
