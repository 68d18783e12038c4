//go:build !unix

package camellia

import "time"

// processCPUTime is not measured here; benchmarks then omit cpuMB/s.
func processCPUTime() time.Duration { return 0 }
