//go:build linux

package main

import "golang.org/x/sys/unix"

// threadCPUTime is the calling OS thread's user+system CPU time in seconds.
func threadCPUTime() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
