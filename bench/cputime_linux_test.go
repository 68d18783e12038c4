package bench

import "syscall"

// processCPUTime returns the process's user+system CPU time in seconds, so
// the single-threaded benchmarks can also report bytes per CPU second,
// the clock `openssl speed` uses, which a busy shared machine disturbs less
// than wall time.
func processCPUTime() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
