//go:build !linux

package mount

func abortConnection(dir string) {}
