//go:build (!amd64 && !arm64 && !arm) || purego

package serpent

var impl = implGeneric

func encryptBlocks(c *Cipher, dst, src []byte) { encryptGeneric(&c.rk, dst, src) }
func decryptBlocks(c *Cipher, dst, src []byte) { decryptGeneric(&c.rk, dst, src) }

func available() []implementation { return []implementation{implGeneric} }

func xtsFused(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) bool { return false }
