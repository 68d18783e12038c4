//go:build amd64 && !purego

package aes

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The kernels below run on CPUs this machine (AVX-512, VAES) is not:
// an instruction of a newer extension would pass every test here and fault
// there. So the generated assembly is checked for what each family may
// use.

// kernelLines returns the instruction lines of every function in
// aes_amd64.s whose name matches fn.
func kernelLines(t *testing.T, fn *regexp.Regexp) []string {
	t.Helper()
	src, err := os.ReadFile("aes_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for i, line := range strings.Split(string(src), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "TEXT ") {
			in = fn.MatchString(trimmed)
			continue
		}
		if in && trimmed != "" && !strings.HasPrefix(trimmed, "//") && !strings.HasSuffix(trimmed, ":") {
			out = append(out, fmt.Sprintf("%d: %s", i+1, trimmed))
		}
	}
	return out
}

// TestAESNIKernelsUseLegacySSE: the AES-NI kernels serve CPUs without AVX
// (Westmere, Atom/Goldmont), so no VEX or EVEX encoding may appear.
func TestAESNIKernelsUseLegacySSE(t *testing.T) {
	lines := kernelLines(t, regexp.MustCompile(`AESNI\(SB\)`))
	if len(lines) < 2000 {
		t.Fatalf("only %d lines of AES-NI kernels found", len(lines))
	}
	if bad := matching(lines, legacyOnly); len(bad) > 0 {
		t.Errorf("AES-NI kernels use VEX/EVEX:\n%s", strings.Join(bad, "\n"))
	}
	// The check itself flags the VAES kernels.
	if len(matching(kernelLines(t, regexp.MustCompile(`VAES2\(SB\)`)), legacyOnly)) == 0 {
		t.Error("the check does not flag the VAES2 kernels")
	}
}

var (
	legacyOnly = regexp.MustCompile(`^V|\b[YZ][0-9]+\b`)
	evexOnly   = regexp.MustCompile(`\b([XY](1[6-9]|2[0-9]|3[01])|Z[0-9]+|K[0-7])\b|VPTERNLOG|VALIGN|VPXOR[DQ]\b|VMOVDQ[AU](32|64)|VBROADCASTI(32|64)X`)
)

// matching returns the lines whose instruction matches re.
func matching(lines []string, re *regexp.Regexp) []string {
	var out []string
	for _, l := range lines {
		if re.MatchString(strings.SplitN(l, ": ", 2)[1]) {
			out = append(out, l)
		}
	}
	return out
}

// TestVAES2KernelsUseOnlyVEX: the 256-bit VAES kernels serve CPUs without
// AVX-512 (Zen 3, Alder Lake): registers Y0-Y15/X0-X15 only and no
// instruction that exists only as EVEX.
func TestVAES2KernelsUseOnlyVEX(t *testing.T) {
	lines := kernelLines(t, regexp.MustCompile(`VAES2\(SB\)`))
	if len(lines) < 2000 {
		t.Fatalf("only %d lines of VAES2 kernels found", len(lines))
	}
	if bad := matching(lines, evexOnly); len(bad) > 0 {
		t.Errorf("VAES2 kernels use EVEX:\n%s", strings.Join(bad, "\n"))
	}
	if len(matching(kernelLines(t, regexp.MustCompile(`VAES\(SB\)`)), evexOnly)) == 0 {
		t.Error("the check does not flag the AVX-512 kernels")
	}
}

func TestGodebugOff(t *testing.T) {
	for env, want := range map[string]bool{
		"":                                    false,
		"cpu.avx512vaes=off":                  true,
		"cpu.vaes=off":                        true,
		"cpu.all=off":                         true,
		"cpu.all=off,cpu.vaes=on":             false,
		"cpu.vaes=off,cpu.all=on":             false,
		"gctrace=1, cpu.avx512vaes=off":       true,
		"cpu.avx512vaesx=off,cpu.avx2=off":    false,
		"cpu.vaes=maybe":                      false,
		"cpu.avx512f=off,cpu.avx512vaes=off,": true,
	} {
		if got := godebugOff(env, "avx512vaes", "vaes"); got != want {
			t.Errorf("godebugOff(%q) = %v, want %v", env, got, want)
		}
	}
}

// TestSSE2KernelsUseOnlySSE2: the bitsliced kernels serve CPUs without
// AES-NI, down to SSE2-only ones (AMD K10): every vector instruction must
// be an SSE2 one (no SSSE3 PSHUFB, no VEX).
func TestSSE2KernelsUseOnlySSE2(t *testing.T) {
	lines := kernelLines(t, regexp.MustCompile(`SSE2\(SB\)`))
	sse2 := map[string]bool{
		"MOVO": true, "MOVOU": true, "PXOR": true, "PAND": true, "POR": true, "PANDN": true,
		"PSHUFD": true, "PSHUFLW": true, "PSHUFHW": true, "PSRLL": true, "PSLLL": true,
		"PSRLQ": true, "PSLLQ": true, "PSRLO": true, "PSLLO": true,
	}
	xmm := regexp.MustCompile(`\bX[0-9]+\b`)
	checked := 0
	for _, l := range lines {
		ins := strings.SplitN(l, ": ", 2)[1]
		if !xmm.MatchString(ins) {
			continue
		}
		checked++
		if op := strings.Fields(ins)[0]; !sse2[op] {
			t.Errorf("SSE2 kernel line %s", l)
		}
	}
	if checked < 5000 {
		t.Fatalf("only %d vector instructions in the SSE2 kernels", checked)
	}
}
