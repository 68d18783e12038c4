//go:build arm64 && !purego

package aes

import "golang.org/x/sys/cpu"

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

// supportedImpls lists the paths, fastest first. Without the cryptography
// extension (the Raspberry Pi 4's Cortex-A72 as its firmware configures
// it; GODEBUG=cpu.aes=off masks it) the bitsliced NEON kernels run: every
// arm64 CPU has NEON.
func supportedImpls() []implementation {
	if hasARMv8AES {
		return []implementation{implARMv8, implNEON, implGeneric}
	}
	return []implementation{implNEON, implGeneric}
}

func (c *Cipher) encryptBlocks(dst, src []byte) {
	if c.impl == implARMv8 {
		encryptBlocksARMv8(c.rounds, &c.enc[0], &dst[0], &src[0], len(src)/16)
		return
	}
	if c.impl == implNEON {
		neonBlocks(c, dst, src, false)
		return
	}
	encryptBlocksGeneric(c, dst, src)
}

// encryptCBC: the portable chain runs the bitsliced path, whose keys
// exist only for the bitsliced implementations.
func (c *Cipher) encryptCBC(dst, src, iv []byte) {
	if c.impl == implARMv8 {
		encryptCBCByBlock(c, dst, src, iv)
		return
	}
	encryptCBCGeneric(c, dst, src, iv)
}

func (c *Cipher) decryptBlocks(dst, src []byte) {
	if c.impl == implARMv8 {
		decryptBlocksARMv8(c.rounds, &c.dec[0], &dst[0], &src[0], len(src)/16)
		return
	}
	if c.impl == implNEON {
		neonBlocks(c, dst, src, true)
		return
	}
	decryptBlocksGeneric(c, dst, src)
}

func (c *Cipher) encryptXTS(dst, src, tweaks []byte, sectorSize int) {
	if c.impl == implARMv8 {
		encryptXTSARMv8(c.rounds, &c.enc[0], &dst[0], &src[0], &tweaks[0], len(tweaks)/16, sectorSize/16)
		return
	}
	if c.impl == implNEON {
		neonXTS(c, dst, src, tweaks, sectorSize, false)
		return
	}
	xtsGeneric(c, dst, src, tweaks, sectorSize, false)
}

func (c *Cipher) decryptXTS(dst, src, tweaks []byte, sectorSize int) {
	if c.impl == implARMv8 {
		decryptXTSARMv8(c.rounds, &c.dec[0], &dst[0], &src[0], &tweaks[0], len(tweaks)/16, sectorSize/16)
		return
	}
	if c.impl == implNEON {
		neonXTS(c, dst, src, tweaks, sectorSize, true)
		return
	}
	xtsGeneric(c, dst, src, tweaks, sectorSize, true)
}
