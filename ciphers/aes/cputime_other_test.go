//go:build !unix

package aes

import "time"

// processCPUTime is unavailable here; benchmarks then omit cpuMB/s.
func processCPUTime() time.Duration { return 0 }
