package main

import (
	"fmt"
	"strings"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/internal/platform"
)

// accelerationReport lists the CPU features and the code path each cipher
// uses here, for `cryptvol version` and the benchmark header.
func accelerationReport() []string {
	p := platform.Detect()
	lines := []string{
		fmt.Sprintf("cpu: %s (%d cores)", p.CPU, p.Cores),
		fmt.Sprintf("cpu features: %s", strings.Join(p.Flags, " ")),
	}
	var impls []string
	for _, s := range ciphers.All() {
		impls = append(impls, s.Name+"="+s.Implementation())
	}
	lines = append(lines, "cipher code paths: "+strings.Join(impls, " "))
	return lines
}
