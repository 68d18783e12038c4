//go:build !amd64 || purego

package aes

// archKeys holds nothing outside amd64.
type archKeys struct{}

func (c *Cipher) setupArchKeys() {}

// plain64Fused reports false: no kernel here derives the plain64 tweaks
// itself (xtsPlain64 does it in batches), so plain64Encrypt and plain64Decrypt are never called.
func (c *Cipher) plain64Fused(t *Cipher, ndst, nsrc, sectorSize int) bool { return false }

func (c *Cipher) plain64Encrypt(dst, src []byte, t *Cipher, first uint64, sectorSize int) {
	panic("aes: no plain64 kernel")
}

func (c *Cipher) plain64Decrypt(dst, src []byte, t *Cipher, first uint64, sectorSize int) {
	panic("aes: no plain64 kernel")
}
