//go:build arm64 && !purego

package lanes

import "golang.org/x/sys/cpu"

// The NEON kernels (chain_arm64.s): n iterations of the chains from lane on.

//go:noescape
func chain512NEONx2(s *State, lane, n int)

//go:noescape
func chain256NEONx4(s *State, lane, n int)

//go:noescape
func chainRIPEMD160NEONx4(s *State, lane, n int)

//go:noescape
func chainBLAKE2sNEONx4(s *State, lane, n int)

var (
	k512NEONx2     = &Kernel{Name: "NEON, 2 lanes", Hash: SHA512, Lanes: 2, run: chain512NEONx2}
	k256NEONx4     = &Kernel{Name: "NEON, 4 lanes", Hash: SHA256, Lanes: 4, run: chain256NEONx4}
	kRIPEMDNEONx4  = &Kernel{Name: "NEON, 4 lanes", Hash: RIPEMD160, Lanes: 4, run: chainRIPEMD160NEONx4}
	kBLAKE2sNEONx4 = &Kernel{Name: "NEON, 4 lanes", Hash: BLAKE2s256, Lanes: 4, run: chainBLAKE2sNEONx4}
)

// Every arm64 CPU has NEON (Advanced SIMD).
func available(h Hash) []*Kernel {
	return []*Kernel{[numHashes]*Kernel{SHA256: k256NEONx4, SHA512: k512NEONx2, RIPEMD160: kRIPEMDNEONx4, BLAKE2s256: kBLAKE2sNEONx4}[h]}
}

// pick: where the CPU hashes SHA-2 in hardware (the ARMv8 SHA2 and
// SHA512 extensions, which crypto/sha256 and crypto/sha512 use), one
// chain at a time with those beats any lanes. Elsewhere NEON and the
// generic kernel are both candidates, as neither wins on every core:
// without a rotate, a NEON round takes about twice the instructions of a
// scalar one (which folds rotations into its xors), so lanes win on wide
// out-of-order cores (Cortex-A72/A76) and can lose on in-order ones whose
// NEON unit runs 128-bit operations in two halves (Cortex-A53/A55).
// Kernels times both on this CPU.
func pick(h Hash) []*Kernel {
	if h == SHA512 && cpu.ARM64.HasSHA512 || h == SHA256 && cpu.ARM64.HasSHA2 {
		return nil
	}
	return append([]*Kernel{generics[h]}, available(h)...)
}

// Features lists the CPU features the kernels use that
// golang.org/x/sys/cpu does not report: none on arm64.
func Features() []string { return nil }
