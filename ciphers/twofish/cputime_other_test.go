//go:build !linux

package twofish

import "time"

// processCPUTime is unavailable here; the CPU-time metrics are left out.
func processCPUTime() time.Duration { return 0 }
