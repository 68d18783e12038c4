//go:build !linux

package bitlk

// processCPUTime is not measured on this system; benchmarks then report
// wall-clock figures only.
func processCPUTime() float64 { return 0 }
