//go:build arm64 && !purego

package aes

import (
	"crypto/subtle"

	"golang.org/x/sys/cpu"
)

// Kernels in aes_arm64.s (ARMv8 cryptography extension). rk points at
// 16*(nr+1) bytes of round keys; nblocks, nsectors and sectorBlocks may be
// zero.

//go:noescape
func encryptBlocksARMv8(nr int, rk *byte, dst, src *byte, nblocks int)

//go:noescape
func decryptBlocksARMv8(nr int, rk *byte, dst, src *byte, nblocks int)

//go:noescape
func encryptXTSARMv8(nr int, rk *byte, dst, src, tweaks *byte, nsectors, sectorBlocks int)

//go:noescape
func decryptXTSARMv8(nr int, rk *byte, dst, src, tweaks *byte, nsectors, sectorBlocks int)

var hasARMv8AES = cpu.ARM64.HasAES

func bestImpl() implementation { return supportedImpls()[0] }

func supportedImpls() []implementation {
	if hasARMv8AES {
		return []implementation{implARMv8, implGeneric}
	}
	return []implementation{implGeneric}
}

func (c *Cipher) encryptBlocks(dst, src []byte) {
	if c.impl == implARMv8 {
		encryptBlocksARMv8(c.rounds, &c.enc[0], &dst[0], &src[0], len(src)/16)
		return
	}
	encryptBlocksGeneric(c, dst, src)
}

// encryptCBC chains through encryptBlocks: the portable chain would run the
// bitsliced path, whose keys exist only for implGeneric ciphers.
func (c *Cipher) encryptCBC(dst, src, iv []byte) {
	if c.impl != implARMv8 {
		encryptCBCGeneric(c, dst, src, iv)
		return
	}
	for i := 0; i < len(src); i += BlockSize {
		d := dst[i : i+BlockSize]
		subtle.XORBytes(d, src[i:i+BlockSize], iv)
		encryptBlocksARMv8(c.rounds, &c.enc[0], &d[0], &d[0], 1)
		copy(iv, d)
	}
}

func (c *Cipher) decryptBlocks(dst, src []byte) {
	if c.impl == implARMv8 {
		decryptBlocksARMv8(c.rounds, &c.dec[0], &dst[0], &src[0], len(src)/16)
		return
	}
	decryptBlocksGeneric(c, dst, src)
}

func (c *Cipher) encryptXTS(dst, src, tweaks []byte, sectorSize int) {
	if c.impl == implARMv8 {
		encryptXTSARMv8(c.rounds, &c.enc[0], &dst[0], &src[0], &tweaks[0], len(tweaks)/16, sectorSize/16)
		return
	}
	xtsGeneric(c, dst, src, tweaks, sectorSize, false)
}

func (c *Cipher) decryptXTS(dst, src, tweaks []byte, sectorSize int) {
	if c.impl == implARMv8 {
		decryptXTSARMv8(c.rounds, &c.dec[0], &dst[0], &src[0], &tweaks[0], len(tweaks)/16, sectorSize/16)
		return
	}
	xtsGeneric(c, dst, src, tweaks, sectorSize, true)
}
