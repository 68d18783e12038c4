//go:build amd64 && !purego

package serpent

import (
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
