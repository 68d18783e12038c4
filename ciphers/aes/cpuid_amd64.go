//go:build amd64 && !purego

package aes

import (
	"os"
	"strings"
)

// cpuid executes CPUID with EAX = leaf, ECX = sub (cpuid_amd64.s).
func cpuid(leaf, sub uint32) (a, b, c, d uint32)

// vaesCPUID reports the VAES and VPCLMULQDQ bits of CPUID leaf 7 (ECX bits
// 9 and 10), unless GODEBUG masks them. golang.org/x/sys/cpu, which the
// rest of the dispatch reads, sets its HasAVX512VAES and
// HasAVX512VPCLMULQDQ only on CPUs with AVX-512, so the 256-bit VAES path
// for CPUs without it (Zen 3, Alder Lake) reads the bits itself. The
// masks are x/sys/cpu's names for the same bits, cpu.avx512vaes=off and
// cpu.avx512vpclmulqdq=off, or cpu.vaes=off and cpu.vpclmulqdq=off, or
// cpu.all=off; as with x/sys/cpu the last setting of a name wins. The
// caller also requires AVX2, which x/sys/cpu checks the OS enables.
func vaesCPUID() bool {
	if max, _, _, _ := cpuid(0, 0); max < 7 {
		return false
	}
	_, _, ecx, _ := cpuid(7, 0)
	const vaes, vpclmulqdq = 1 << 9, 1 << 10
	if ecx&vaes == 0 || ecx&vpclmulqdq == 0 {
		return false
	}
	env := os.Getenv("GODEBUG")
	return !godebugOff(env, "avx512vaes", "vaes") && !godebugOff(env, "avx512vpclmulqdq", "vpclmulqdq")
}

// godebugOff reports whether GODEBUG (env) turns a CPU feature off under
// any of the given names, or all features with cpu.all=off.
func godebugOff(env string, names ...string) bool {
	off := false
	for _, field := range strings.Split(env, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(field), "=")
		if !ok || !strings.HasPrefix(key, "cpu.") || (value != "on" && value != "off") {
			continue
		}
		key = key[len("cpu."):]
		if key == "all" {
			off = value == "off"
			continue
		}
		for _, n := range names {
			if key == n {
				off = value == "off"
			}
		}
	}
	return off
}
