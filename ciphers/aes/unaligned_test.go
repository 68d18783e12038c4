package aes

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestPathsAgreeUnaligned compares every path with the portable one on
// buffers at every offset within a word, for every key size and for
// lengths around the kernels' run sizes (8 blocks for NEON and AES-NI, 32
// for VAES), ECB and XTS with sectors that do not fill a run.
func TestPathsAgreeUnaligned(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, ks := range []int{16, 24, 32} {
		key := make([]byte, ks)
		fill(rng, key)
		ref, _ := newWithImpl(key, implGeneric)
		for _, impl := range supportedImpls() {
			c, _ := newWithImpl(key, impl)
			for _, blocks := range []int{1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 64, 65} {
				for off := 0; off < 4; off++ {
					src := make([]byte, 16*blocks+off)[off:]
					fill(rng, src)
					tweaks := make([]byte, 16)
					fill(rng, tweaks)
					want := make([]byte, len(src))
					got := make([]byte, len(src)+1)[1:]
					ref.EncryptBlocks(want, src)
					c.EncryptBlocks(got, src)
					if !bytes.Equal(got, want) {
						t.Fatalf("%s, key %d, %d blocks at offset %d: encrypt differs at byte %d", impl, ks, blocks, off, firstDiff(got, want))
					}
					ref.DecryptBlocks(want, src)
					c.DecryptBlocks(got, src)
					if !bytes.Equal(got, want) {
						t.Fatalf("%s, key %d, %d blocks at offset %d: decrypt differs at byte %d", impl, ks, blocks, off, firstDiff(got, want))
					}
					// XTS: one sector of the whole length, and sectors of
					// 48 bytes when the length allows (tweaks cross runs).
					for _, sector := range []int{len(src), 48} {
						if len(src)%sector != 0 {
							continue
						}
						tw := make([]byte, 16*(len(src)/sector))
						fill(rng, tw)
						ref.EncryptXTS(want, src, tw, sector)
						c.EncryptXTS(got, src, tw, sector)
						if !bytes.Equal(got, want) {
							t.Fatalf("%s, key %d, %d blocks at offset %d, sector %d: XTS encrypt differs at byte %d", impl, ks, blocks, off, sector, firstDiff(got, want))
						}
						ref.DecryptXTS(want, src, tw, sector)
						c.DecryptXTS(got, src, tw, sector)
						if !bytes.Equal(got, want) {
							t.Fatalf("%s, key %d, %d blocks at offset %d, sector %d: XTS decrypt differs at byte %d", impl, ks, blocks, off, sector, firstDiff(got, want))
						}
					}
				}
			}
		}
	}
}
