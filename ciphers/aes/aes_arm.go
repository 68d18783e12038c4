//go:build arm && !purego

package aes

import "golang.org/x/sys/cpu"

// On 32-bit ARM the bitsliced NEON kernels run where the CPU has NEON
// (ARMv7: Raspberry Pi 2 and 3 on a 32-bit OS). GOARM=6 and 7 binaries also
// run on the Pi 1's ARM1176, which has none, so the choice is made at run
// time from the HWCAP bit (GODEBUG=cpu.neon=off masks it).
var hasNEON = cpu.ARM.HasNEON

func bestImpl() implementation { return supportedImpls()[0] }

// supportedImpls lists every path that can run here, the default first:
// the constant-time ones fastest first, and the table path last unless
// CRYPTVOL_AES_TABLES=1 chose it (see aes_table_arm.go).
func supportedImpls() []implementation {
	var l []implementation
	if tablesRequested {
		l = append(l, implTable)
	}
	if hasNEON {
		l = append(l, implNEON)
	}
	l = append(l, implGeneric)
	if !tablesRequested {
		l = append(l, implTable)
	}
	return l
}

func (c *Cipher) encryptBlocks(dst, src []byte) {
	switch c.impl {
	case implNEON:
		neonBlocks(c, dst, src, false)
		return
	case implTable:
		tableBlocks(c, dst, src, false)
		return
	}
	encryptBlocksGeneric(c, dst, src)
}

func (c *Cipher) decryptBlocks(dst, src []byte) {
	switch c.impl {
	case implNEON:
		neonBlocks(c, dst, src, true)
		return
	case implTable:
		tableBlocks(c, dst, src, true)
		return
	}
	decryptBlocksGeneric(c, dst, src)
}

// encryptCBC: the portable chain runs the bitsliced path, whose keys the
// table path does not have.
func (c *Cipher) encryptCBC(dst, src, iv []byte) {
	if c.impl == implTable {
		encryptCBCByBlock(c, dst, src, iv)
		return
	}
	encryptCBCGeneric(c, dst, src, iv)
}

func (c *Cipher) encryptXTS(dst, src, tweaks []byte, sectorSize int) {
	switch c.impl {
	case implNEON:
		neonXTS(c, dst, src, tweaks, sectorSize, false)
		return
	case implTable:
		tableXTS(c, dst, src, tweaks, sectorSize, false)
		return
	}
	xtsGeneric(c, dst, src, tweaks, sectorSize, false)
}

func (c *Cipher) decryptXTS(dst, src, tweaks []byte, sectorSize int) {
	switch c.impl {
	case implNEON:
		neonXTS(c, dst, src, tweaks, sectorSize, true)
		return
	case implTable:
		tableXTS(c, dst, src, tweaks, sectorSize, true)
		return
	}
	xtsGeneric(c, dst, src, tweaks, sectorSize, true)
}
