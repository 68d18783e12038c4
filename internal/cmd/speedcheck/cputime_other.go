//go:build !linux

package main

// threadCPUTime is not available here; speedcheck falls back to wall time.
func threadCPUTime() float64 { return 0 }
