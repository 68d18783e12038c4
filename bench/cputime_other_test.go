//go:build !linux

package bench

// processCPUTime is not measured on this system; the benchmarks then report
// wall-clock figures only.
func processCPUTime() float64 { return 0 }
