//go:build (!amd64 && !arm64 && !arm) || purego

package aes

func bestImpl() implementation { return implGeneric }

// supportedImpls lists every path that can run here, fastest first.
func supportedImpls() []implementation { return []implementation{implGeneric} }

func (c *Cipher) encryptBlocks(dst, src []byte) { encryptBlocksGeneric(c, dst, src) }
func (c *Cipher) decryptBlocks(dst, src []byte) { decryptBlocksGeneric(c, dst, src) }

func (c *Cipher) encryptCBC(dst, src, iv []byte) { encryptCBCGeneric(c, dst, src, iv) }

func (c *Cipher) encryptXTS(dst, src, tweaks []byte, sectorSize int) {
	xtsGeneric(c, dst, src, tweaks, sectorSize, false)
}

func (c *Cipher) decryptXTS(dst, src, tweaks []byte, sectorSize int) {
	xtsGeneric(c, dst, src, tweaks, sectorSize, true)
}
