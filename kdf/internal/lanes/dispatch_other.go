//go:build !(amd64 || arm64) || purego

package lanes

func available(h Hash) []*Kernel { return nil }

func pick(h Hash) []*Kernel {
	if h == SHA512 {
		return []*Kernel{generic512}
	}
	return []*Kernel{generic256}
}
