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
func chainRIPEMD160AVX512x16(s *State, lane, n int)

//go:noescape
func chainRIPEMD160AVX512x8(s *State, lane, n int)

//go:noescape
func chainRIPEMD160AVX2x8(s *State, lane, n int)

//go:noescape
func chainRIPEMD160AVXx4(s *State, lane, n int)

//go:noescape
func chainBLAKE2sAVX512x16(s *State, lane, n int)

//go:noescape
func chainBLAKE2sAVX512x8(s *State, lane, n int)

//go:noescape
func chain256SHANIx1(s *State, lane, n int)

//go:noescape
func chain256SHANIx2(s *State, lane, n int)

// The one-chain SHA-512 kernels (asmgen/scalar512.go): the rounds in
// general registers, the schedule in xmm.

//go:noescape
func chain512SSE2x1(s *State, lane, n int)

//go:noescape
func chain512BMI2x1(s *State, lane, n int)

var (
	k512SSE2x1        = &Kernel{Name: "scalar SSE2, 1 chain", Hash: SHA512, Lanes: 1, run: chain512SSE2x1}
	k512BMI2x1        = &Kernel{Name: "scalar BMI2+AVX, 1 chain", Hash: SHA512, Lanes: 1, run: chain512BMI2x1}
	k512AVX512x8      = &Kernel{Name: "AVX-512 zmm, 8 lanes", Hash: SHA512, Lanes: 8, run: chain512AVX512x8}
	k512AVX512x4      = &Kernel{Name: "AVX-512 ymm, 4 lanes", Hash: SHA512, Lanes: 4, run: chain512AVX512x4}
	k512AVX2x4        = &Kernel{Name: "AVX2, 4 lanes", Hash: SHA512, Lanes: 4, run: chain512AVX2x4}
	k256AVX512x16     = &Kernel{Name: "AVX-512 zmm, 16 lanes", Hash: SHA256, Lanes: 16, run: chain256AVX512x16}
	k256AVX512x8      = &Kernel{Name: "AVX-512 ymm, 8 lanes", Hash: SHA256, Lanes: 8, run: chain256AVX512x8}
	k256AVX2x8        = &Kernel{Name: "AVX2, 8 lanes", Hash: SHA256, Lanes: 8, run: chain256AVX2x8}
	k512AVXx2         = &Kernel{Name: "AVX, 2 lanes", Hash: SHA512, Lanes: 2, run: chain512AVXx2}
	k256AVXx4         = &Kernel{Name: "AVX, 4 lanes", Hash: SHA256, Lanes: 4, run: chain256AVXx4}
	kRIPEMDAVX512x16  = &Kernel{Name: "AVX-512 zmm, 16 lanes", Hash: RIPEMD160, Lanes: 16, run: chainRIPEMD160AVX512x16}
	kRIPEMDAVX512x8   = &Kernel{Name: "AVX-512 ymm, 8 lanes", Hash: RIPEMD160, Lanes: 8, run: chainRIPEMD160AVX512x8}
	kRIPEMDAVX2x8     = &Kernel{Name: "AVX2, 8 lanes", Hash: RIPEMD160, Lanes: 8, run: chainRIPEMD160AVX2x8}
	kRIPEMDAVXx4      = &Kernel{Name: "AVX, 4 lanes", Hash: RIPEMD160, Lanes: 4, run: chainRIPEMD160AVXx4}
	kBLAKE2sAVX512x16 = &Kernel{Name: "AVX-512 zmm, 16 lanes", Hash: BLAKE2s256, Lanes: 16, run: chainBLAKE2sAVX512x16}
	kBLAKE2sAVX512x8  = &Kernel{Name: "AVX-512 ymm, 8 lanes", Hash: BLAKE2s256, Lanes: 8, run: chainBLAKE2sAVX512x8}
	k256SHANIx1       = &Kernel{Name: "SHA-NI, 1 chain", Hash: SHA256, Lanes: 1, run: chain256SHANIx1}
	k256SHANIx2       = &Kernel{Name: "SHA-NI, 2 chains interleaved", Hash: SHA256, Lanes: 2, run: chain256SHANIx2}
)

// The AVX-512 kernels need F (zmm, VPROR, VPTERNLOG) and VL (the same on
// ymm, and registers 16-31 there).
var hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL

// The scalar SHA-512 kernel with RORX (BMI2) takes its schedule's
// instructions from AVX.
var hasBMI2AVX = cpu.X86.HasBMI2 && cpu.X86.HasAVX

// The SHA-NI kernels use VEX-encoded moves and shuffles around the SHA
// instructions, as crypto/sha256 does, so they need AVX too.
var hasSHANI = cpuHasSHA() && cpu.X86.HasAVX && cpu.X86.HasSSE41 && !godebugOff("sha")

func available(h Hash) []*Kernel {
	var ks []*Kernel
	switch h {
	case SHA512:
		ks = append(ks, k512SSE2x1)
		if hasBMI2AVX {
			ks = append(ks, k512BMI2x1)
		}
		if hasAVX512 {
			ks = append(ks, k512AVX512x4, k512AVX512x8)
		}
		if cpu.X86.HasAVX2 {
			ks = append(ks, k512AVX2x4)
		}
		if cpu.X86.HasAVX {
			ks = append(ks, k512AVXx2)
		}
	case BLAKE2s256:
		if hasAVX512 {
			ks = append(ks, kBLAKE2sAVX512x8, kBLAKE2sAVX512x16)
		}
	case RIPEMD160:
		if hasAVX512 {
			ks = append(ks, kRIPEMDAVX512x8, kRIPEMDAVX512x16)
		}
		if cpu.X86.HasAVX2 {
			ks = append(ks, kRIPEMDAVX2x8)
		}
		if cpu.X86.HasAVX {
			ks = append(ks, kRIPEMDAVXx4)
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

// pick returns the candidates Kernels measures and the caller plans
// with. SHA-256 with the SHA extensions takes them and the AVX-512 ones:
// on Zen 4, two interleaved SHA-NI chains cost about as much per chain as
// the 16 lanes of zmm and far less than 8 partly filled ones (a VeraCrypt
// header key has 6 blocks); other CPUs differ. The AVX2 and AVX kernels do
// the same work as AVX-512's with more instructions, so they are only
// the fallbacks. SHA-512 has a one-chain scalar kernel beside its lane
// kernels on every profile (scalar512), which the caller's plan fills
// when lanes would stay idle. Without AVX, the generic kernels are 10-15%
// faster than crypto/sha256's scalar assembly, and hashes/
// ripemd160's Go, through HMAC states (measured with GODEBUG=cpu.all=off:
// BenchmarkPBKDF2Paths in kdf); BLAKE2s without AVX-512 keeps
// golang.org/x/crypto/blake2s's SSE4/AVX2 assembly one chain at a time
// (its sixteen state words fill all sixteen registers of AVX2).
func pick(h Hash) []*Kernel {
	var ks []*Kernel
	if h == SHA256 && hasSHANI {
		ks = append(ks, k256SHANIx1, k256SHANIx2)
	}
	switch {
	case h == BLAKE2s256 && hasAVX512:
		return []*Kernel{kBLAKE2sAVX512x8, kBLAKE2sAVX512x16}
	case h == BLAKE2s256:
		return nil
	case h == RIPEMD160 && hasAVX512:
		return []*Kernel{kRIPEMDAVX512x8, kRIPEMDAVX512x16}
	case h == RIPEMD160 && cpu.X86.HasAVX2:
		return []*Kernel{kRIPEMDAVX2x8}
	case h == RIPEMD160 && cpu.X86.HasAVX:
		return []*Kernel{kRIPEMDAVXx4}
	case h == RIPEMD160:
		return []*Kernel{genericRIPEMD160} // 10% faster than through HMAC states
	case h == SHA256 && hasAVX512:
		return append(ks, k256AVX512x8, k256AVX512x16)
	case h == SHA512 && hasAVX512:
		return []*Kernel{scalar512(), k512AVX512x4, k512AVX512x8}
	case h == SHA256 && cpu.X86.HasAVX2:
		return append(ks, k256AVX2x8)
	case h == SHA512 && cpu.X86.HasAVX2:
		return []*Kernel{scalar512(), k512AVX2x4}
	case h == SHA256 && cpu.X86.HasAVX:
		return append(ks, k256AVXx4)
	case h == SHA512 && cpu.X86.HasAVX:
		return []*Kernel{scalar512(), k512AVXx2}
	case h == SHA256:
		return append(ks, generic256)
	case h == SHA512:
		return []*Kernel{scalar512()}
	}
	return nil
}

// scalar512 is the one-chain SHA-512 kernel for this CPU. One chain (a
// LUKS keyslot, a one-cipher VeraCrypt header) leaves all lanes but one
// of the lane kernels idle. On the EPYC (Zen 4) this was written on, one
// chain ran in 0.50 of the time of the 4-lane AVX-512 ymm kernel, 0.30 of
// AVX2's and 0.31 of AVX's 2 lanes (BMI2+AVX), and 0.51 of generic Go's
// (SSE2) (BenchmarkKernels, same run).
func scalar512() *Kernel {
	if hasBMI2AVX {
		return k512BMI2x1
	}
	return k512SSE2x1
}

// Features lists the CPU features the kernels chosen here use that
// golang.org/x/sys/cpu does not report (the SHA extensions), under the
// same test that chooses them.
func Features() []string {
	if hasSHANI {
		return []string{"SHA-NI"}
	}
	return nil
}
