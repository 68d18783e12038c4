//go:build !amd64 || purego

package aes

// archKeys holds nothing outside amd64.
type archKeys struct{}

func (c *Cipher) setupArchKeys() {}
