//go:build amd64 && !purego

package lanes

import (
	"os"
	"strings"
)

func cpuid7() (ebx uint32)
func cpuidMax() (eax uint32)

// cpuHasSHA reports the SHA extensions (CPUID.(EAX=7,ECX=0):EBX bit 29),
// which golang.org/x/sys/cpu does not report.
func cpuHasSHA() bool {
	return cpuidMax() >= 7 && cpuid7()&(1<<29) != 0
}

// godebugOff reports whether GODEBUG turns the CPU feature off the way
// the runtime reads it for the standard library (cpu.NAME=off, or
// cpu.all=off not followed by cpu.NAME=on; the last setting wins), so a
// feature x/sys/cpu does not know masks both this package and crypto/.
func godebugOff(name string) bool {
	off := false
	for _, f := range strings.Split(os.Getenv("GODEBUG"), ",") {
		k, v, ok := strings.Cut(f, "=")
		if !ok || (k != "cpu."+name && k != "cpu.all") {
			continue
		}
		switch v {
		case "off":
			off = true
		case "on":
			off = false
		}
	}
	return off
}
