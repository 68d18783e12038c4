//go:build !amd64 || purego

package twofish

// kernelTables is empty: the portable code needs only s and k.
type kernelTables struct{}

func bestKernel() kernel { return kernelGeneric }

// availableKernels lists every kernel this machine can run, for tests.
func availableKernels() []kernel { return []kernel{kernelGeneric} }

func (c *Cipher) prepareKernel() {}

func (c *Cipher) encryptBlocks(dst, src []byte) { encryptBlocksGeneric(c, dst, src) }
func (c *Cipher) decryptBlocks(dst, src []byte) { decryptBlocksGeneric(c, dst, src) }

func (c *Cipher) encryptXTS(dst, src, tweaks []byte, sectorSize int) {
	xtsGeneric(c, dst, src, tweaks, sectorSize, false)
}

func (c *Cipher) decryptXTS(dst, src, tweaks []byte, sectorSize int) {
	xtsGeneric(c, dst, src, tweaks, sectorSize, true)
}
