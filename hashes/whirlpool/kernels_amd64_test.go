//go:build amd64 && !purego

package whirlpool

type kernel struct {
	name string
	f    func(h, m *[8]uint64)
}

// kernels lists the compression functions (on words) this CPU can run.
func kernels() []kernel {
	ks := []kernel{
		{"generic", genericWords},
		{"dispatched", blockWords},
		{"tables", blockAsm},
	}
	if useGFNI {
		ks = append(ks, kernel{"gfni", func(h, m *[8]uint64) { blockGFNI(h, m, gfni) }})
	}
	return ks
}
