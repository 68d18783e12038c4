package aes

import (
	"bytes"
	stdaes "crypto/aes"
	stdcipher "crypto/cipher"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"golang.org/x/crypto/xts"
)

// Differential tests against the standard library's AES and
// golang.org/x/crypto/xts, independent implementations.

func TestECBAgainstStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	forEachImpl(t, func(t *testing.T, impl implementation) {
		for _, ks := range []int{16, 24, 32} {
			for n := 0; n <= 100; n++ {
				key := make([]byte, ks)
				fill(rng, key)
				ref, _ := stdaes.NewCipher(key)
				c, err := newWithImpl(key, impl)
				if err != nil {
					t.Fatal(err)
				}
				src := make([]byte, 16*n)
				fill(rng, src)
				want := make([]byte, len(src))
				for i := 0; i < len(src); i += 16 {
					ref.Encrypt(want[i:], src[i:])
				}
				got := make([]byte, len(src))
				c.EncryptBlocks(got, src)
				if !bytes.Equal(got, want) {
					t.Fatalf("key %d bytes, %d blocks: encrypt differs", ks, n)
				}
				back := make([]byte, len(src))
				c.DecryptBlocks(back, got)
				if !bytes.Equal(back, src) {
					t.Fatalf("key %d bytes, %d blocks: decrypt differs", ks, n)
				}
				// In place, both directions.
				buf := append([]byte(nil), src...)
				c.EncryptBlocks(buf, buf)
				if !bytes.Equal(buf, want) {
					t.Fatalf("key %d bytes, %d blocks: in-place encrypt differs", ks, n)
				}
				c.DecryptBlocks(buf, buf)
				if !bytes.Equal(buf, src) {
					t.Fatalf("key %d bytes, %d blocks: in-place decrypt differs", ks, n)
				}
			}
		}
	})
}

func TestXTSAgainstXCrypto(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// 512 and 4096 are the sizes volumes use; the others reach every tail of
	// the 32/16/8/4-block loops inside one sector.
	sizes := []int{512, 4096, 16, 48, 64, 80, 112, 128, 240, 256, 272, 496, 528, 768, 1008}
	forEachImpl(t, func(t *testing.T, impl implementation) {
		for _, ks := range []int{16, 24, 32} {
			for _, size := range sizes {
				for iter := 0; iter < 3; iter++ {
					key1 := make([]byte, ks)
					key2 := make([]byte, ks)
					fill(rng, key1)
					fill(rng, key2)
					ref, err := xts.NewCipher(stdaes.NewCipher, append(append([]byte(nil), key1...), key2...))
					if err != nil {
						t.Fatal(err)
					}
					tk, _ := stdaes.NewCipher(key2)
					c, _ := newWithImpl(key1, impl)

					sectors := 1 + rng.IntN(40)
					if size == 4096 {
						sectors = 1 + rng.IntN(12) // keep the run time modest
					}
					first := rng.Uint64() >> rng.IntN(64)
					src := make([]byte, sectors*size)
					fill(rng, src)
					want := make([]byte, len(src))
					tweaks := make([]byte, 16*sectors)
					for s := 0; s < sectors; s++ {
						ref.Encrypt(want[s*size:(s+1)*size], src[s*size:(s+1)*size], first+uint64(s))
						binary.LittleEndian.PutUint64(tweaks[16*s:], first+uint64(s))
						tk.Encrypt(tweaks[16*s:], tweaks[16*s:])
					}
					got := make([]byte, len(src))
					c.EncryptXTS(got, src, tweaks, size)
					if !bytes.Equal(got, want) {
						t.Fatalf("key %d, sector %d x %d: encrypt differs at byte %d", ks, size, sectors, firstDiff(got, want))
					}
					back := make([]byte, len(src))
					c.DecryptXTS(back, got, tweaks, size)
					if !bytes.Equal(back, src) {
						t.Fatalf("key %d, sector %d x %d: decrypt differs at byte %d", ks, size, sectors, firstDiff(back, src))
					}
					buf := append([]byte(nil), src...)
					c.EncryptXTS(buf, buf, tweaks, size)
					if !bytes.Equal(buf, want) {
						t.Fatalf("key %d, sector %d x %d: in-place encrypt differs", ks, size, sectors)
					}
					c.DecryptXTS(buf, buf, tweaks, size)
					if !bytes.Equal(buf, src) {
						t.Fatalf("key %d, sector %d x %d: in-place decrypt differs", ks, size, sectors)
					}
				}
			}
		}
	})
}

// TestTweakCarries drives tweaks whose top bits are set, so the 0x87
// reduction fires on the first doublings in every lane.
func TestTweakCarries(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	ref, _ := stdaes.NewCipher(key)
	forEachImpl(t, func(t *testing.T, impl implementation) {
		c, _ := newWithImpl(key, impl)
		for _, pattern := range []byte{0xff, 0x80, 0x01, 0x00} {
			tw := bytes.Repeat([]byte{pattern}, 16)
			src := make([]byte, 4096)
			for i := range src {
				src[i] = byte(i * 7)
			}
			want := make([]byte, len(src))
			lo, hi := binary.LittleEndian.Uint64(tw), binary.LittleEndian.Uint64(tw[8:])
			var x [16]byte
			for j := 0; j < len(src)/16; j++ {
				binary.LittleEndian.PutUint64(x[:], lo)
				binary.LittleEndian.PutUint64(x[8:], hi)
				for i := range x {
					x[i] ^= src[16*j+i]
				}
				ref.Encrypt(x[:], x[:])
				binary.LittleEndian.PutUint64(want[16*j:], lo^binary.LittleEndian.Uint64(x[:]))
				binary.LittleEndian.PutUint64(want[16*j+8:], hi^binary.LittleEndian.Uint64(x[8:]))
				lo, hi = mulAlpha(lo, hi)
			}
			got := make([]byte, len(src))
			c.EncryptXTS(got, src, tw, len(src))
			if !bytes.Equal(got, want) {
				t.Fatalf("tweak %x: differs at byte %d", tw, firstDiff(got, want))
			}
		}
	})
}

func TestMulAlpha(t *testing.T) {
	// Against a byte-wise reference written from IEEE 1619 section 5.2.
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 1000; i++ {
		var b [16]byte
		fill(rng, b[:])
		lo, hi := mulAlpha(binary.LittleEndian.Uint64(b[:]), binary.LittleEndian.Uint64(b[8:]))
		var cin byte
		for j := 0; j < 16; j++ {
			cout := b[j] >> 7
			b[j] = b[j]<<1 | cin
			cin = cout
		}
		if cin == 1 {
			b[0] ^= 0x87
		}
		if lo != binary.LittleEndian.Uint64(b[:]) || hi != binary.LittleEndian.Uint64(b[8:]) {
			t.Fatalf("mulAlpha wrong")
		}
	}
}

func fill(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestCBCAgainstStdlib checks EncryptCBC on every code path against
// crypto/cipher's CBC over the standard library's AES, in one call and
// split into pieces (the chaining value carried in iv), in place and not.
func TestCBCAgainstStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	forEachImpl(t, func(t *testing.T, impl implementation) {
		for _, ks := range []int{16, 24, 32} {
			for n := 0; n <= 40; n++ {
				key := make([]byte, ks)
				fill(rng, key)
				iv := make([]byte, 16)
				fill(rng, iv)
				ref, _ := stdaes.NewCipher(key)
				src := make([]byte, 16*n)
				fill(rng, src)
				want := make([]byte, len(src))
				stdcipher.NewCBCEncrypter(ref, iv).CryptBlocks(want, src)
				c, err := newWithImpl(key, impl)
				if err != nil {
					t.Fatal(err)
				}
				chain := bytes.Clone(iv)
				got := make([]byte, len(src))
				c.EncryptCBC(got, src, chain)
				if !bytes.Equal(got, want) {
					t.Fatalf("key %d bytes, %d blocks: CBC encrypt differs", ks, n)
				}
				if n > 0 && !bytes.Equal(chain, want[len(want)-16:]) {
					t.Fatalf("key %d bytes, %d blocks: iv does not hold the last ciphertext block", ks, n)
				}
				chain = bytes.Clone(iv)
				buf := bytes.Clone(src)
				for at := 0; at < len(buf); {
					k := 16 * (1 + rng.IntN(5))
					k = min(k, len(buf)-at)
					c.EncryptCBC(buf[at:at+k], buf[at:at+k], chain)
					at += k
				}
				if !bytes.Equal(buf, want) {
					t.Fatalf("key %d bytes, %d blocks: in-place CBC in pieces differs", ks, n)
				}
			}
		}
	})
}

// TestXTSPlain64AgainstXCrypto: the methods that derive the plain64
// tweaks themselves match x/crypto/xts (sector numbers as tweaks) on every
// path, across the 32-sector batches and the 2^64 wrap, and decline a
// tweak key of another kind.
func TestXTSPlain64AgainstXCrypto(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	forEachImpl(t, func(t *testing.T, impl implementation) {
		for _, ks := range []int{16, 32} {
			for _, size := range []int{512, 4096, 48} {
				for _, sectors := range []int{1, 8, 33, 70} {
					key := make([]byte, 2*ks)
					fill(rng, key)
					ref, err := xts.NewCipher(stdaes.NewCipher, key)
					if err != nil {
						t.Fatal(err)
					}
					c, _ := newWithImpl(key[:ks], impl)
					k2, _ := newWithImpl(key[ks:], impl)
					first := rng.Uint64()
					if sectors == 33 {
						first = ^uint64(0) - 5
					}
					src := make([]byte, sectors*size)
					fill(rng, src)
					want := make([]byte, len(src))
					for s := 0; s < sectors; s++ {
						ref.Encrypt(want[s*size:(s+1)*size], src[s*size:(s+1)*size], first+uint64(s))
					}
					got := make([]byte, len(src))
					if !c.EncryptXTSPlain64(got, src, k2, first, size) {
						t.Fatal("EncryptXTSPlain64 declined an AES tweak key")
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("key %d, %d sectors of %d: encrypt differs at byte %d", ks, sectors, size, firstDiff(got, want))
					}
					if !c.DecryptXTSPlain64(got, got, k2, first, size) || !bytes.Equal(got, src) {
						t.Fatalf("key %d, %d sectors of %d: in-place decrypt does not invert", ks, sectors, size)
					}
				}
			}
		}
		c, _ := newWithImpl(make([]byte, 16), impl)
		if c.EncryptXTSPlain64(make([]byte, 512), make([]byte, 512), "not a cipher", 0, 512) {
			t.Error("EncryptXTSPlain64 accepted a tweak key of another kind")
		}
	})
}
