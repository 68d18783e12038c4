//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package encbench

// processCPU is not available here: the benchmark uses wall time.
func processCPU() (float64, bool) { return 0, false }
