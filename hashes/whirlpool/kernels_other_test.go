//go:build !amd64 || purego

package whirlpool

type kernel struct {
	name string
	f    func(h, m *[8]uint64)
}

// kernels lists the compression functions (on words) this CPU can run.
func kernels() []kernel {
	return []kernel{{"generic", genericWords}, {"dispatched", blockWords}}
}
