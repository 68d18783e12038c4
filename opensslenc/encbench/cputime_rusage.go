//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package encbench

import "syscall"

// processCPU returns the user+system CPU time of this process in seconds,
// all threads included, and true; the clock `openssl speed` counts in.
func processCPU() (float64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9, true
}
