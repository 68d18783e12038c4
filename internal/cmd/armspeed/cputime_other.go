//go:build !linux

package main

// threadCPUTime is not measured here; the caller falls back to wall time.
func threadCPUTime() float64 { return 0 }
