package camellia

import (
	"bytes"
	"crypto/rand"
	"testing"
)

// TestAcceleratedMatchesGeneric runs every available code path over the same
// random keys and buffers (whole 64-block groups plus every tail length up
// to 64 blocks, at each key size) and requires identical output.
func TestAcceleratedMatchesGeneric(t *testing.T) {
	impls := implementations()
	if len(impls) < 2 {
		t.Skip("no accelerated implementation on this machine")
	}
	for _, ks := range []int{16, 24, 32} {
		key := make([]byte, ks)
		rand.Read(key)
		c, _ := New(key)
		for blocks := 0; blocks <= 2*64+64; blocks += 1 + blocks/16 {
			src := make([]byte, 16*blocks)
			rand.Read(src)
			var enc, dec [][]byte
			for _, im := range impls {
				restore := im.use()
				e := make([]byte, len(src))
				c.EncryptBlocks(e, src)
				d := append([]byte(nil), src...)
				c.DecryptBlocks(d, d)
				restore()
				enc, dec = append(enc, e), append(dec, d)
			}
			for i := 1; i < len(impls); i++ {
				if !bytes.Equal(enc[i], enc[0]) || !bytes.Equal(dec[i], dec[0]) {
					t.Fatalf("%d-byte key, %d blocks: %s differs from %s", ks, blocks, impls[i].name, impls[0].name)
				}
			}
		}
	}
}
