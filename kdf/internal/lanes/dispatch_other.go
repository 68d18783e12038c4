//go:build !(amd64 || arm64) || purego

package lanes

func available(h Hash) []*Kernel { return nil }

// pick: the generic kernels, which skip the HMAC-state copies and
// buffering of the one-chain-at-a-time path: under qemu (the only ARMv6
// and MIPS here, a proxy as both are plain Go) they ran 1.3-3x faster
// for SHA-256/512, 1.6x for RIPEMD-160 and about as fast for BLAKE2s.
func pick(h Hash) []*Kernel { return []*Kernel{generics[h]} }

// Features lists the CPU features the kernels use: none here.
func Features() []string { return nil }
