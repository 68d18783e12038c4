package main

import "golang.org/x/sys/unix"

// threadCPUTime returns the calling OS thread's user+system CPU time in
// seconds (the caller has locked its goroutine to the thread).
func threadCPUTime() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// processCPUTime returns the whole process's user+system CPU time in
// seconds: work a library hands to other goroutines counts too.
func processCPUTime() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
