//go:build !(amd64 || arm64) || purego

package lanes

func available(h Hash) []*Kernel { return nil }

// pick: the generic kernels; for RIPEMD-160 the HMAC-state path through
// hashes/ripemd160 is as fast as the generic kernel (which calls the same
// compression function), and for BLAKE2s x/crypto's, so there are none.
func pick(h Hash) []*Kernel {
	if h == RIPEMD160 || h == BLAKE2s256 {
		return nil
	}
	return []*Kernel{generics[h]}
}
