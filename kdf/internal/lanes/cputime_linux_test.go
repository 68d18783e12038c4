package lanes

import "syscall"

// threadCPUTime is the CPU time of the calling thread in seconds: on a
// shared machine it varies far less than wall time (callers lock the
// goroutine to its thread).
func threadCPUTime() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
