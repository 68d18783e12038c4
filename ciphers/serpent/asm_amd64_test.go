//go:build amd64 && !purego

package serpent

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestAVX2KernelsUseOnlyAVX2 guards the AVX2 kernels, which this machine
// (with AVX-512) cannot prove safe by running them: the generator's register
// allocator may hand out Y16-Y31, which the assembler silently encodes with
// EVEX for some instructions, and those would fault on an AVX2-only CPU.
func TestAVX2KernelsUseOnlyAVX2(t *testing.T) {
	src, err := os.ReadFile("serpent_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	evex := regexp.MustCompile(`\b(Y(1[6-9]|2[0-9]|3[01])|Z[0-9]+|K[0-7])\b|VPTERNLOG|VPRO[LR]D|VP(XOR|AND|OR|ANDN)[DQ]\b|VMOVDQ[AU](32|64)`)
	fn, checked := "", 0
	for i, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "TEXT ") {
			fn = line
			continue
		}
		if !strings.Contains(fn, "AVX2") {
			continue
		}
		checked++
		if m := evex.FindString(line); m != "" {
			t.Errorf("line %d in %s uses %s: %s", i+1, fn, m, strings.TrimSpace(line))
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d lines of AVX2 kernels found", checked)
	}
}

// TestSSE2KernelsUseOnlySSE2 guards the SSE2 kernels, which run on CPUs
// with nothing beyond the amd64 baseline (an AMD K10, an early Atom): every
// vector instruction in them must be an SSE2 one, never a VEX encoding or
// an SSSE3/SSE4 instruction. This machine has them all, so running the
// kernels here cannot prove it.
func TestSSE2KernelsUseOnlySSE2(t *testing.T) {
	src, err := os.ReadFile("serpent_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	if bad := nonSSE2(string(src), sse2Mnemonics); len(bad) > 0 {
		t.Errorf("SSE2 kernels use other instructions:\n%s", strings.Join(bad, "\n"))
	}
	// The check itself: a list without PANDN must flag the kernels.
	less := map[string]bool{}
	for k := range sse2Mnemonics {
		if k != "PANDN" {
			less[k] = true
		}
	}
	if len(nonSSE2(string(src), less)) == 0 {
		t.Error("no PANDN found in the SSE2 kernels: the check looks at nothing")
	}
}

var sse2Mnemonics = map[string]bool{
	"MOVO": true, "MOVOU": true, "PXOR": true, "POR": true, "PAND": true, "PANDN": true,
	"PSLLL": true, "PSRLL": true, "PADDL": true, "PSHUFD": true, "PCMPEQL": true,
	"PUNPCKLLQ": true, "PUNPCKHLQ": true, "PUNPCKLQDQ": true, "PUNPCKHQDQ": true,
}

// nonSSE2 returns the lines of the SSE2 kernels in src that use an xmm
// register with a mnemonic outside allowed.
func nonSSE2(src string, allowed map[string]bool) []string {
	xmm := regexp.MustCompile(`\bX[0-9]+\b`)
	var bad []string
	fn, checked := "", 0
	for i, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(line, "TEXT ") {
			fn = line
			continue
		}
		fields := strings.Fields(line)
		if !strings.Contains(fn, "SSE2") || len(fields) == 0 || !xmm.MatchString(line) {
			continue
		}
		checked++
		if !allowed[fields[0]] {
			bad = append(bad, fmt.Sprintf("line %d: %s", i+1, strings.TrimSpace(line)))
		}
	}
	if checked < 1000 {
		bad = append(bad, fmt.Sprintf("only %d vector instructions in SSE2 kernels", checked))
	}
	return bad
}
