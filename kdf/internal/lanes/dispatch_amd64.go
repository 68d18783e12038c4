//go:build amd64 && !purego

package lanes

import "golang.org/x/sys/cpu"

// The assembly kernels (chain_amd64.s): n iterations of the chains from
// lane on.

//go:noescape
func chain512AVX512x8(s *State, lane, n int)

//go:noescape
func chain512AVX512x4(s *State, lane, n int)

//go:noescape
func chain256AVX512x16(s *State, lane, n int)

//go:noescape
func chain256AVX512x8(s *State, lane, n int)

//go:noescape
func chain512AVX2x4(s *State, lane, n int)

//go:noescape
func chain256AVX2x8(s *State, lane, n int)

//go:noescape
func chain512AVXx2(s *State, lane, n int)

//go:noescape
func chain256AVXx4(s *State, lane, n int)

//go:noescape
func chain256SHANIx1(s *State, lane, n int)

//go:noescape
func chain256SHANIx2(s *State, lane, n int)

// Costs are CPU nanoseconds per iteration of a full group on the AMD
// EPYC (Zen 4) this was written on (BenchmarkKernels, best of 3); only
// their ratios matter, to plan groups.
var (
	k512AVX512x8  = &Kernel{Name: "AVX-512 zmm, 8 lanes", Hash: SHA512, Lanes: 8, Cost: 635, run: chain512AVX512x8}
	k512AVX512x4  = &Kernel{Name: "AVX-512 ymm, 4 lanes", Hash: SHA512, Lanes: 4, Cost: 400, run: chain512AVX512x4}
	k512AVX2x4    = &Kernel{Name: "AVX2, 4 lanes", Hash: SHA512, Lanes: 4, Cost: 730, run: chain512AVX2x4}
	k256AVX512x16 = &Kernel{Name: "AVX-512 zmm, 16 lanes", Hash: SHA256, Lanes: 16, Cost: 485, run: chain256AVX512x16}
	k256AVX512x8  = &Kernel{Name: "AVX-512 ymm, 8 lanes", Hash: SHA256, Lanes: 8, Cost: 280, run: chain256AVX512x8}
	k256AVX2x8    = &Kernel{Name: "AVX2, 8 lanes", Hash: SHA256, Lanes: 8, Cost: 525, run: chain256AVX2x8}
	k512AVXx2     = &Kernel{Name: "AVX, 2 lanes", Hash: SHA512, Lanes: 2, Cost: 730, run: chain512AVXx2}
	k256AVXx4     = &Kernel{Name: "AVX, 4 lanes", Hash: SHA256, Lanes: 4, Cost: 525, run: chain256AVXx4}
	k256SHANIx1   = &Kernel{Name: "SHA-NI, 1 chain", Hash: SHA256, Lanes: 1, Cost: 50, run: chain256SHANIx1}
	k256SHANIx2   = &Kernel{Name: "SHA-NI, 2 chains interleaved", Hash: SHA256, Lanes: 2, Cost: 60, run: chain256SHANIx2}
)

// The AVX-512 kernels need F (zmm, VPROR, VPTERNLOG) and VL (the same on
// ymm, and registers 16-31 there).
var hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL

// The SHA-NI kernels use VEX-encoded moves and shuffles around the SHA
// instructions, as crypto/sha256 does, so they need AVX too.
var hasSHANI = cpuHasSHA() && cpu.X86.HasAVX && cpu.X86.HasSSE41 && !godebugOff("sha")

func available(h Hash) []*Kernel {
	var ks []*Kernel
	switch h {
	case SHA512:
		if hasAVX512 {
			ks = append(ks, k512AVX512x4, k512AVX512x8)
		}
		if cpu.X86.HasAVX2 {
			ks = append(ks, k512AVX2x4)
		}
		if cpu.X86.HasAVX {
			ks = append(ks, k512AVXx2)
		}
	case SHA256:
		if hasSHANI {
			ks = append(ks, k256SHANIx1, k256SHANIx2)
		}
		if hasAVX512 {
			ks = append(ks, k256AVX512x8, k256AVX512x16)
		}
		if cpu.X86.HasAVX2 {
			ks = append(ks, k256AVX2x8)
		}
		if cpu.X86.HasAVX {
			ks = append(ks, k256AVXx4)
		}
	}
	return ks
}

// pick: for SHA-256, two interleaved SHA-NI chains cost about as much per
// chain as the 16 lanes of zmm and far less than 8 partly filled ones
// (a VeraCrypt header key has 6 blocks), and they need no AVX-512.
// Without AVX, the generic kernel is 10-15% faster than crypto/sha512's
// and crypto/sha256's own scalar assembly through HMAC states (measured
// here with GODEBUG=cpu.avx2=off: BenchmarkPBKDF2Paths in kdf).
func pick(h Hash) []*Kernel {
	switch {
	case h == SHA256 && hasSHANI:
		return []*Kernel{k256SHANIx1, k256SHANIx2}
	case h == SHA256 && hasAVX512:
		return []*Kernel{k256AVX512x8, k256AVX512x16}
	case h == SHA256 && cpu.X86.HasAVX2:
		return []*Kernel{k256AVX2x8}
	case h == SHA512 && hasAVX512:
		return []*Kernel{k512AVX512x4, k512AVX512x8}
	case h == SHA512 && cpu.X86.HasAVX2:
		return []*Kernel{k512AVX2x4}
	case h == SHA256 && cpu.X86.HasAVX:
		return []*Kernel{k256AVXx4}
	case h == SHA512 && cpu.X86.HasAVX:
		return []*Kernel{k512AVXx2}
	case h == SHA256:
		return []*Kernel{generic256}
	}
	return []*Kernel{generic512}
}
