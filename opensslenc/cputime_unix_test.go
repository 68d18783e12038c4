//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package opensslenc

import "syscall"

// processCPUTime is the process's user+system CPU seconds, for the
// benchmarks' cpu-MB/s figure (the clock `openssl speed` uses).
func processCPUTime() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
