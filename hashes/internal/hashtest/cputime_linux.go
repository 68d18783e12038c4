package hashtest

import "syscall"

// CPUSeconds returns the user+system CPU time of the process. Benchmarks
// report throughput per CPU-second beside the wall-clock figure, which
// stays comparable on a machine shared with other work.
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
