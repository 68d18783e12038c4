package serpent

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestPathsAgreeUnaligned runs every path on buffers that start at every
// offset within a word, for lengths around the kernels' run sizes (8 blocks
// on 32-bit ARM, 16 on arm64, 8 and 16 on amd64), blocks and XTS, against
// the portable code.
func TestPathsAgreeUnaligned(t *testing.T) {
	rnd := rand.New(rand.NewSource(3))
	saved := impl
	defer func() { impl = saved }()
	key := make([]byte, 32)
	rnd.Read(key)
	c, _ := New(key)
	for _, blocks := range []int{1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 33, 64} {
		for off := 0; off < 4; off++ {
			src := make([]byte, 16*blocks+off)[off:]
			rnd.Read(src)
			tweaks := make([]byte, 16)
			rnd.Read(tweaks)
			impl = implGeneric
			wantEnc := make([]byte, len(src))
			c.EncryptBlocks(wantEnc, src)
			wantDec := make([]byte, len(src))
			c.DecryptBlocks(wantDec, src)
			wantXTS := make([]byte, len(src))
			c.EncryptXTS(wantXTS, src, tweaks, len(src))
			for _, i := range available() {
				impl = i
				dst := make([]byte, len(src)+3)[3:]
				c.EncryptBlocks(dst, src)
				if !bytes.Equal(dst, wantEnc) {
					t.Fatalf("%s: encrypt %d blocks at offset %d differs from generic", i.name(), blocks, off)
				}
				c.DecryptBlocks(dst, src)
				if !bytes.Equal(dst, wantDec) {
					t.Fatalf("%s: decrypt %d blocks at offset %d differs from generic", i.name(), blocks, off)
				}
				c.EncryptXTS(dst, src, tweaks, len(src))
				if !bytes.Equal(dst, wantXTS) {
					t.Fatalf("%s: XTS encrypt %d blocks at offset %d differs from generic", i.name(), blocks, off)
				}
				c.DecryptXTS(dst, dst, tweaks, len(src))
				if !bytes.Equal(dst, src) {
					t.Fatalf("%s: XTS %d blocks at offset %d does not round-trip", i.name(), blocks, off)
				}
			}
		}
	}
}
