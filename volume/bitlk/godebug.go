package bitlk

import (
	"os"
	"strings"
)

// godebugOff reports whether GODEBUG masks a CPU feature (cpu.NAME=off or
// cpu.all=off), for features golang.org/x/sys/cpu does not know.
func godebugOff(feature string) bool {
	for _, f := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if f == "cpu."+feature+"=off" || f == "cpu.all=off" {
			return true
		}
	}
	return false
}
