//go:build !linux

package main

// threadCPUTime is not available here; speedcheck falls back to wall time.
func threadCPUTime() float64 { return 0 }

// processCPUTime is not available here; speedcheck falls back to wall time.
func processCPUTime() float64 { return 0 }
