//go:build !linux

package hashtest

// CPUSeconds is not measured on this system.
func CPUSeconds() float64 { return 0 }
