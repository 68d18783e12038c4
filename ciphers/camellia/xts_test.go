package camellia

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"
)

// referenceXTS is IEEE 1619 XTS written directly from the standard, one
// block at a time through EncryptBlocks/DecryptBlocks.
func referenceXTS(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) {
	for s := 0; s < len(tweaks)/16; s++ {
		var t [16]byte
		copy(t[:], tweaks[16*s:])
		for off := s * sectorSize; off < (s+1)*sectorSize; off += 16 {
			var b [16]byte
			for j := range b {
				b[j] = src[off+j] ^ t[j]
			}
			if decrypt {
				c.DecryptBlocks(b[:], b[:])
			} else {
				c.EncryptBlocks(b[:], b[:])
			}
			for j := range b {
				dst[off+j] = b[j] ^ t[j]
			}
			carry := t[15] >> 7
			for j := 15; j > 0; j-- {
				t[j] = t[j]<<1 | t[j-1]>>7
			}
			t[0] = t[0]<<1 ^ 0x87*carry
		}
	}
}

func TestXTSMatchesReference(t *testing.T) {
	forEachImplementation(t, func(t *testing.T) {
		for _, tc := range []struct{ sectorSize, sectors int }{
			{16, 1}, {16, 100}, {32, 3}, {48, 33}, {512, 1}, {512, 2}, {512, 5}, {4096, 3}, {1008, 7},
		} {
			t.Run(fmt.Sprintf("%dx%d", tc.sectors, tc.sectorSize), func(t *testing.T) {
				for _, ks := range []int{16, 32} {
					key := make([]byte, ks)
					rand.Read(key)
					c, _ := New(key)
					src := make([]byte, tc.sectorSize*tc.sectors)
					tweaks := make([]byte, 16*tc.sectors)
					rand.Read(src)
					rand.Read(tweaks)
					want := make([]byte, len(src))
					referenceXTS(c, want, src, tweaks, tc.sectorSize, false)
					got := make([]byte, len(src))
					c.EncryptXTS(got, src, tweaks, tc.sectorSize)
					if !bytes.Equal(got, want) {
						t.Fatalf("%d-byte key: EncryptXTS differs from the reference", ks)
					}
					c.DecryptXTS(got, got, tweaks, tc.sectorSize) // in place
					if !bytes.Equal(got, src) {
						t.Fatalf("%d-byte key: DecryptXTS(EncryptXTS(x)) != x", ks)
					}
				}
			})
		}
	})
}

func TestXTSNoAllocations(t *testing.T) {
	c, _ := New(make([]byte, 32))
	buf := make([]byte, 9*512)
	tweaks := make([]byte, 9*16)
	if n := testing.AllocsPerRun(10, func() {
		c.EncryptXTS(buf, buf, tweaks, 512)
		c.DecryptXTS(buf, buf, tweaks, 512)
	}); n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}

func TestXTSBadLengthsPanic(t *testing.T) {
	c, _ := New(make([]byte, 32))
	for _, tc := range []struct{ n, tweaks, sectorSize int }{{512, 32, 512}, {500, 16, 500}, {512, 16, 0}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v: no panic", tc)
				}
			}()
			c.EncryptXTS(make([]byte, tc.n), make([]byte, tc.n), make([]byte, tc.tweaks), tc.sectorSize)
		}()
	}
}
