//go:build amd64 && !purego

package aes

import "golang.org/x/sys/cpu"

//go:generate go run asmgen/gen.go asmgen/bitslice.go asmgen/xts8.go

// Kernels in aes_amd64.s. rk points at 16*(nr+1) bytes of round keys;
// nblocks, nsectors and sectorBlocks may be zero.

//go:noescape
func encryptBlocksAESNI(nr int, rk *byte, dst, src *byte, nblocks int)

//go:noescape
func decryptBlocksAESNI(nr int, rk *byte, dst, src *byte, nblocks int)

//go:noescape
func encryptXTSAESNI(nr int, rk *byte, dst, src, tweaks *byte, nsectors, sectorBlocks int)

//go:noescape
func decryptXTSAESNI(nr int, rk *byte, dst, src, tweaks *byte, nsectors, sectorBlocks int)

// encryptXTS8AESNI and decryptXTS8AESNI run n runs of 8 blocks, per runs
// per sector: the kernel for sectors of a multiple of 128 bytes.
//
//go:noescape
func encryptXTS8AESNI(nr int, rk *byte, dst, src, tweaks *byte, n, per int)

//go:noescape
func decryptXTS8AESNI(nr int, rk *byte, dst, src, tweaks *byte, n, per int)

// encryptXTSP64AESNI and decryptXTSP64AESNI are the XTS8 kernels with the
// plain64 tweaks derived inside: sector s (per runs of 8 blocks) uses
// E(rk2, first+s), rk2 the tweak key's encryption round keys (nr rounds
// too).
//
//go:noescape
func encryptXTSP64AESNI(nr int, rk, rk2, dst, src *byte, first uint64, n, per int)

//go:noescape
func decryptXTSP64AESNI(nr int, rk, rk2, dst, src *byte, first uint64, n, per int)

// encryptCBCAESNI encrypts nblocks blocks in CBC mode chaining from the 16
// bytes at iv, and leaves the last ciphertext block there.
//
//go:noescape
func encryptCBCAESNI(nr int, rk *byte, dst, src, iv *byte, nblocks int)

// The VAES kernels with AVX2 (ymm, VEX): ECB, and XTS over n runs of 16
// blocks, per runs per sector.
//
//go:noescape
func encryptBlocksVAES2(nr int, rk *byte, dst, src *byte, nblocks int)

//go:noescape
func decryptBlocksVAES2(nr int, rk *byte, dst, src *byte, nblocks int)

//go:noescape
func encryptXTSVAES2(nr int, rk *byte, dst, src, tweaks *byte, n, per int)

//go:noescape
func decryptXTSVAES2(nr int, rk *byte, dst, src, tweaks *byte, n, per int)

//go:noescape
func encryptBlocksVAES(nr int, rk *byte, dst, src *byte, nblocks int)

//go:noescape
func decryptBlocksVAES(nr int, rk *byte, dst, src *byte, nblocks int)

//go:noescape
func encryptXTSVAES(nr int, rk *byte, dst, src, tweaks *byte, nsectors, sectorBlocks int)

//go:noescape
func decryptXTSVAES(nr int, rk *byte, dst, src, tweaks *byte, nsectors, sectorBlocks int)

var (
	hasAESNI = cpu.X86.HasAES && cpu.X86.HasSSE41
	// The 256-bit VAES kernels use VEX-encoded VAES and VPCLMULQDQ on ymm
	// and AVX2 (variable shifts): Zen 3, Alder Lake and later, which may
	// lack AVX-512. golang.org/x/sys/cpu reports VAES only with AVX-512,
	// so the CPUID bits are read here (see vaesCPUID).
	hasVAES2 = hasAESNI && cpu.X86.HasAVX2 && cpu.X86.HasPCLMULQDQ && vaesCPUID()
	// The VAES kernels use zmm registers (AVX512F), EVEX-encoded xmm forms
	// and byte shifts (AVX512VL, AVX512BW), VAES and VPCLMULQDQ on zmm.
	hasVAES = hasAESNI && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL &&
		cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VAES && cpu.X86.HasAVX512VPCLMULQDQ
)

func bestImpl() implementation { return supportedImpls()[0] }

func supportedImpls() []implementation {
	var out []implementation
	if hasVAES {
		out = append(out, implVAES)
	}
	if hasVAES2 {
		out = append(out, implVAES2)
	}
	if hasAESNI {
		out = append(out, implAESNI)
	}
	// SSE2 is part of amd64: CPUs without AES-NI run the bitsliced kernel.
	return append(out, implSSE2, implGeneric)
}

func (c *Cipher) encryptBlocks(dst, src []byte) {
	switch c.impl {
	case implVAES:
		encryptBlocksVAES(c.rounds, &c.enc[0], &dst[0], &src[0], len(src)/16)
	case implVAES2:
		encryptBlocksVAES2(c.rounds, &c.enc[0], &dst[0], &src[0], len(src)/16)
	case implAESNI:
		encryptBlocksAESNI(c.rounds, &c.enc[0], &dst[0], &src[0], len(src)/16)
	case implSSE2:
		c.sse2Blocks(dst, src, false)
	default:
		encryptBlocksGeneric(c, dst, src)
	}
}

func (c *Cipher) encryptCBC(dst, src, iv []byte) {
	if c.impl == implGeneric || c.impl == implSSE2 {
		encryptCBCGeneric(c, dst, src, iv)
		return
	}
	// VAES CPUs have AES-NI; wider registers do not help a serial chain.
	encryptCBCAESNI(c.rounds, &c.enc[0], &dst[0], &src[0], &iv[0], len(src)/16)
}

func (c *Cipher) decryptBlocks(dst, src []byte) {
	switch c.impl {
	case implVAES:
		decryptBlocksVAES(c.rounds, &c.dec[0], &dst[0], &src[0], len(src)/16)
	case implVAES2:
		decryptBlocksVAES2(c.rounds, &c.dec[0], &dst[0], &src[0], len(src)/16)
	case implAESNI:
		decryptBlocksAESNI(c.rounds, &c.dec[0], &dst[0], &src[0], len(src)/16)
	case implSSE2:
		c.sse2Blocks(dst, src, true)
	default:
		decryptBlocksGeneric(c, dst, src)
	}
}

func (c *Cipher) encryptXTS(dst, src, tweaks []byte, sectorSize int) {
	switch c.impl {
	case implVAES:
		encryptXTSVAES(c.rounds, &c.enc[0], &dst[0], &src[0], &tweaks[0], len(tweaks)/16, sectorSize/16)
	case implVAES2:
		if sectorSize%256 == 0 {
			encryptXTSVAES2(c.rounds, &c.enc[0], &dst[0], &src[0], &tweaks[0], len(src)/256, sectorSize/256)
			return
		}
		fallthrough
	case implAESNI:
		if sectorSize%128 == 0 {
			encryptXTS8AESNI(c.rounds, &c.enc[0], &dst[0], &src[0], &tweaks[0], len(src)/128, sectorSize/128)
			return
		}
		encryptXTSAESNI(c.rounds, &c.enc[0], &dst[0], &src[0], &tweaks[0], len(tweaks)/16, sectorSize/16)
	case implSSE2:
		c.sse2XTS(dst, src, tweaks, sectorSize, false)
	default:
		xtsGeneric(c, dst, src, tweaks, sectorSize, false)
	}
}

func (c *Cipher) decryptXTS(dst, src, tweaks []byte, sectorSize int) {
	switch c.impl {
	case implVAES:
		decryptXTSVAES(c.rounds, &c.dec[0], &dst[0], &src[0], &tweaks[0], len(tweaks)/16, sectorSize/16)
	case implVAES2:
		if sectorSize%256 == 0 {
			decryptXTSVAES2(c.rounds, &c.dec[0], &dst[0], &src[0], &tweaks[0], len(src)/256, sectorSize/256)
			return
		}
		fallthrough
	case implAESNI:
		if sectorSize%128 == 0 {
			decryptXTS8AESNI(c.rounds, &c.dec[0], &dst[0], &src[0], &tweaks[0], len(src)/128, sectorSize/128)
			return
		}
		decryptXTSAESNI(c.rounds, &c.dec[0], &dst[0], &src[0], &tweaks[0], len(tweaks)/16, sectorSize/16)
	case implSSE2:
		c.sse2XTS(dst, src, tweaks, sectorSize, true)
	default:
		xtsGeneric(c, dst, src, tweaks, sectorSize, true)
	}
}

// plain64Fused reports whether the AES-NI kernel that also encrypts the
// plain64 tweaks takes a run: the AES-NI path (and the VAES2 path's
// 128-byte sectors, which it leaves to AES-NI anyway), sectors of a power
// of two of at least 128 bytes (512 and 4096 on disks), a tweak key of the
// same size, and a valid run of one or more sectors (no division). Other
// runs go to xtsPlain64, which also reports the errors.
func (c *Cipher) plain64Fused(t *Cipher, ndst, nsrc, sectorSize int) bool {
	return sectorSize >= 128 && sectorSize&(sectorSize-1) == 0 && nsrc&(sectorSize-1) == 0 &&
		nsrc != 0 && ndst >= nsrc && t.rounds == c.rounds &&
		(c.impl == implAESNI || c.impl == implVAES2 && sectorSize == 128)
}

// plain64Encrypt and plain64Decrypt run a run plain64Fused took in one
// kernel call.
func (c *Cipher) plain64Encrypt(dst, src []byte, t *Cipher, first uint64, sectorSize int) {
	encryptXTSP64AESNI(c.rounds, &c.enc[0], &t.enc[0], &dst[0], &src[0], first, len(src)>>7, sectorSize>>7)
}

func (c *Cipher) plain64Decrypt(dst, src []byte, t *Cipher, first uint64, sectorSize int) {
	decryptXTSP64AESNI(c.rounds, &c.dec[0], &t.enc[0], &dst[0], &src[0], first, len(src)>>7, sectorSize>>7)
}
