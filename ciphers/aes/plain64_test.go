package aes

import (
	"bytes"
	stdaes "crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/crypto/xts"
)

// xtsPlain64Ref is XTS with plain64 tweaks written from IEEE 1619 over the
// standard library's AES, one block at a time: sector s of src uses
// T = E_k2(first+s) (the sector number modulo 2^64, 16 bytes little-endian)
// and block j of it T·α^j.
func xtsPlain64Ref(k1, k2 cipher.Block, dst, src []byte, first uint64, sectorSize int, decrypt bool) {
	var x, t [16]byte
	for s := 0; s*sectorSize < len(src); s++ {
		binary.LittleEndian.PutUint64(t[:8], first+uint64(s))
		binary.LittleEndian.PutUint64(t[8:], 0)
		k2.Encrypt(t[:], t[:])
		lo, hi := binary.LittleEndian.Uint64(t[:8]), binary.LittleEndian.Uint64(t[8:])
		for j := 0; j < sectorSize; j += 16 {
			off := s*sectorSize + j
			binary.LittleEndian.PutUint64(x[:8], binary.LittleEndian.Uint64(src[off:])^lo)
			binary.LittleEndian.PutUint64(x[8:], binary.LittleEndian.Uint64(src[off+8:])^hi)
			if decrypt {
				k1.Decrypt(x[:], x[:])
			} else {
				k1.Encrypt(x[:], x[:])
			}
			binary.LittleEndian.PutUint64(dst[off:], binary.LittleEndian.Uint64(x[:8])^lo)
			binary.LittleEndian.PutUint64(dst[off+8:], binary.LittleEndian.Uint64(x[8:])^hi)
			lo, hi = mulAlpha(lo, hi)
		}
	}
}

// TestXTSPlain64Runs: the plain64 methods, on every path and so on the
// AES-NI kernel that encrypts the tweaks itself (eight in its prologue,
// later ones beside the runs into a ring of eight), match the reference
// for runs of 1 to 20 sectors (past the ring twice) of every sector size
// the kernel takes (128 to 4096 bytes: one to 32 runs of eight blocks per
// sector) and of sizes it leaves to the batch path, starting anywhere: at
// random, so that the run crosses 2^64 (sector numbers wrap to 0 as in
// dm-crypt's plain64) at every position, and across 2^32. Encryption and
// decryption, in place and not, with all three key sizes, and a tweak key
// of another size than the data key (which the kernel declines). Where
// the AES-NI kernel should take a run, the test checks that it does, so a
// fallback cannot pass for it. The paths without that kernel (which
// derive the tweaks in batches, as TestXTSPlain64AgainstXCrypto checks
// too) run a sample of the run lengths: the portable one is slow under
// qemu.
func TestXTSPlain64Runs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	type shape struct{ size, maxSectors int }
	shapes := []shape{{128, 20}, {256, 20}, {512, 20}, {1024, 12}, {4096, 10}, {384, 10}, {48, 10}}
	forEachImpl(t, func(t *testing.T, impl implementation) {
		sample := impl != implAESNI && impl != implVAES2
		for _, ks := range [][2]int{{16, 16}, {24, 24}, {32, 32}, {32, 16}} {
			k1key, k2key := make([]byte, ks[0]), make([]byte, ks[1])
			fill(rng, k1key)
			fill(rng, k2key)
			c, _ := newWithImpl(k1key, impl)
			k2, _ := newWithImpl(k2key, impl)
			ref1, _ := stdaes.NewCipher(k1key)
			ref2, _ := stdaes.NewCipher(k2key)
			for _, sh := range shapes {
				for n := 1; n <= sh.maxSectors; n++ {
					if sample && n != 1 && n != 2 && n != 9 && n != sh.maxSectors {
						continue
					}
					firsts := []uint64{rng.Uint64(), ^uint64(0) - uint64(rng.IntN(n)), 1<<32 - 1 - uint64(rng.IntN(n))}
					if n == 1 {
						firsts = append(firsts, 0, ^uint64(0))
					}
					for _, first := range firsts {
						name := fmt.Sprintf("keys %d/%d, %d sectors of %d from %#x", ks[0], ks[1], n, sh.size, first)
						checkPlain64Run(t, name, c, k2, ref1, ref2, rng, n*sh.size, first, sh.size)
					}
				}
			}
		}
	})
}

func checkPlain64Run(t *testing.T, name string, c, k2 *Cipher, ref1, ref2 cipher.Block, rng *rand.Rand, size int, first uint64, sectorSize int) {
	t.Helper()
	src := make([]byte, size)
	fill(rng, src)
	want := make([]byte, size)
	xtsPlain64Ref(ref1, ref2, want, src, first, sectorSize, false)
	pow2 := sectorSize >= 128 && sectorSize&(sectorSize-1) == 0
	wantFused := c.rounds == k2.rounds &&
		(c.impl == implAESNI && pow2 || c.impl == implVAES2 && sectorSize == 128)
	if fused := c.plain64Fused(k2, size, size, sectorSize); fused != wantFused {
		t.Fatalf("%s: the AES-NI plain64 kernel takes the run: %v, want %v", name, fused, wantFused)
	}
	// Out of place, into a longer dst whose tail must stay untouched.
	got := bytes.Repeat([]byte{0xa5}, size+32)
	if !c.EncryptXTSPlain64(got, src, k2, first, sectorSize) {
		t.Fatalf("%s: EncryptXTSPlain64 declined an AES tweak key", name)
	}
	if !bytes.Equal(got[:size], want) {
		t.Fatalf("%s: encryption differs at byte %d", name, firstDiff(got[:size], want))
	}
	if !bytes.Equal(got[size:], bytes.Repeat([]byte{0xa5}, 32)) {
		t.Fatalf("%s: encryption wrote past the input's length", name)
	}
	back := make([]byte, size)
	if !c.DecryptXTSPlain64(back, want, k2, first, sectorSize) || !bytes.Equal(back, src) {
		t.Fatalf("%s: decryption differs at byte %d", name, firstDiff(back, src))
	}
	// In place, and decryption against the reference's own.
	buf := bytes.Clone(src)
	c.DecryptXTSPlain64(buf, buf, k2, first, sectorSize)
	xtsPlain64Ref(ref1, ref2, want, src, first, sectorSize, true)
	if !bytes.Equal(buf, want) {
		t.Fatalf("%s: in-place decryption differs at byte %d", name, firstDiff(buf, want))
	}
	c.EncryptXTSPlain64(buf, buf, k2, first, sectorSize)
	if !bytes.Equal(buf, src) {
		t.Fatalf("%s: in-place encryption does not invert decryption", name)
	}
}

// TestXTSPlain64ReferenceAgainstXCrypto checks the test's own reference
// against golang.org/x/crypto/xts, an independent implementation, across
// the 2^64 wrap.
func TestXTSPlain64ReferenceAgainstXCrypto(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	key := make([]byte, 64)
	fill(rng, key)
	x, _ := xts.NewCipher(stdaes.NewCipher, key)
	ref1, _ := stdaes.NewCipher(key[:32])
	ref2, _ := stdaes.NewCipher(key[32:])
	src := make([]byte, 8*512)
	fill(rng, src)
	first := ^uint64(0) - 3
	got, want := make([]byte, len(src)), make([]byte, len(src))
	xtsPlain64Ref(ref1, ref2, got, src, first, 512, false)
	for s := 0; s < 8; s++ {
		x.Encrypt(want[512*s:512*(s+1)], src[512*s:512*(s+1)], first+uint64(s))
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("reference differs from x/crypto/xts at byte %d", firstDiff(got, want))
	}
}
