//go:build amd64 && !purego

package adiantum

import "golang.org/x/sys/cpu"

// nhSSE2 and nhAVX2 (nh_amd64.s) hash units 16-byte units of msg with the
// permuted key from the message's first unit on.

//go:noescape
func nhSSE2(key *uint32, msg *byte, units int, out *[4]uint64)

//go:noescape
func nhAVX2(key *uint32, msg *byte, units int, out *[4]uint64)

const (
	nhImplGeneric = iota
	nhImplSSE2
	nhImplAVX2
)

var nhImpl = bestNH()

func bestNH() int {
	if cpu.X86.HasAVX2 {
		return nhImplAVX2
	}
	return nhImplSSE2
}

// nhImpls lists every NH path this CPU can run, for the tests.
func nhImpls() []int {
	if cpu.X86.HasAVX2 {
		return []int{nhImplAVX2, nhImplSSE2, nhImplGeneric}
	}
	return []int{nhImplSSE2, nhImplGeneric}
}

func nhImplName(i int) string {
	switch i {
	case nhImplAVX2:
		return "avx2"
	case nhImplSSE2:
		return "sse2"
	}
	return "generic"
}

// nhWith hashes msg (whole units, at most 1024 bytes) on path impl.
func nhWith(impl int, k *nhKey, msg []byte, out *[4]uint64) {
	units := len(msg) / nhUnit
	if units == 0 {
		*out = [4]uint64{}
		return
	}
	switch impl {
	case nhImplAVX2:
		nhAVX2(&k.permuted[0], &msg[0], units, out)
	case nhImplSSE2:
		nhSSE2(&k.permuted[0], &msg[0], units, out)
	default:
		nhGeneric(k, msg, out)
	}
}
