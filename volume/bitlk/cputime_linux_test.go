package bitlk

import "syscall"

// processCPUTime returns the user+system CPU time of the process in
// seconds. cryptsetup's PBKDF2 benchmark measures CPU time (getrusage), so
// comparing with it on a busy machine needs the same clock.
func processCPUTime() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
