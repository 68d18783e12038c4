//go:build !linux

package lanes

func threadCPUTime() float64 { return 0 }
