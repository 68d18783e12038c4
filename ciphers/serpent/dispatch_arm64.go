//go:build arm64 && !purego

package serpent

// encryptNEON and decryptNEON process n runs of 16 blocks (serpent_arm64.s).
//
//go:noescape
func encryptNEON(rk *[132]uint32, dst, src *byte, n int)

//go:noescape
func decryptNEON(rk *[132]uint32, dst, src *byte, n int)

const neonRun = 16

// impl is NEON, which every arm64 CPU has; tests may lower it.
var impl = implNEON

func available() []implementation { return []implementation{implGeneric, implNEON} }

func xtsFused(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) bool { return false }
