//go:build !amd64 || purego

package aes

// archKeys holds nothing outside amd64.
type archKeys struct{}

func (c *Cipher) setupArchKeys() {}

// xtsPlain64Fused reports false: no kernel here derives the tweaks itself.
func (c *Cipher) xtsPlain64Fused(dst, src []byte, t *Cipher, first uint64, sectorSize int, decrypt bool) bool {
	return false
}
