//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package opensslenc

// processCPUTime is not available here; the benchmarks report no cpu-MB/s.
func processCPUTime() float64 { return 0 }
