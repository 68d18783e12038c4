//go:build amd64 && !purego

package twofish

import "golang.org/x/sys/cpu"

// kernelTables holds what the AVX-512 kernel needs beyond the fused tables.
type kernelTables struct {
	sbox [1024]byte // s_0..s_3 as plain byte permutations
}

var hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL &&
	cpu.X86.HasAVX512VBMI && cpu.X86.HasAVX512GFNI

func bestKernel() kernel {
	if hasAVX512 {
		return kernelAVX512
	}
	return kernelGeneric
}

// availableKernels lists every kernel this machine can run, for tests.
func availableKernels() []kernel {
	ks := []kernel{kernelGeneric}
	if hasAVX512 {
		ks = append(ks, kernelAVX512)
	}
	return ks
}

func (c *Cipher) prepareKernel() {
	if c.impl == kernelAVX512 {
		c.extra = new(kernelTables)
		c.plainSboxes(&c.extra.sbox)
	}
}

func (c *Cipher) encryptBlocks(dst, src []byte) {
	switch c.impl {
	case kernelAVX512:
		ecbAVX512(c, dst, src, false)
	default:
		encryptBlocksGeneric(c, dst, src)
	}
}

func (c *Cipher) decryptBlocks(dst, src []byte) {
	switch c.impl {
	case kernelAVX512:
		ecbAVX512(c, dst, src, true)
	default:
		decryptBlocksGeneric(c, dst, src)
	}
}

func (c *Cipher) encryptXTS(dst, src, tweaks []byte, sectorSize int) {
	switch c.impl {
	case kernelAVX512:
		xtsAVX512(c, dst, src, tweaks, sectorSize, false)
	default:
		xtsGeneric(c, dst, src, tweaks, sectorSize, false)
	}
}

func (c *Cipher) decryptXTS(dst, src, tweaks []byte, sectorSize int) {
	switch c.impl {
	case kernelAVX512:
		xtsAVX512(c, dst, src, tweaks, sectorSize, true)
	default:
		xtsGeneric(c, dst, src, tweaks, sectorSize, true)
	}
}
