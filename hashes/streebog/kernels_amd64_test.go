//go:build amd64 && !purego

package streebog

type kernel struct {
	name string
	f    func(h, m *[8]uint64, n uint64)
}

// kernels lists the g_N implementations this CPU can run.
func kernels() []kernel {
	ks := []kernel{
		{"generic", compressGeneric},
		{"dispatched", compress},
		{"tables", compressAsm},
	}
	if useGFNI {
		ks = append(ks, kernel{"gfni", func(h, m *[8]uint64, n uint64) { compressGFNI(h, m, n, gfni) }})
	}
	return ks
}
