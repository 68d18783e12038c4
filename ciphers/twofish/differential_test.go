package twofish

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	xtwofish "golang.org/x/crypto/twofish"
	"golang.org/x/crypto/xts"
)

// TestDifferentialECB compares every kernel with golang.org/x/crypto/twofish
// on random keys of each size and runs of 1..100 blocks, out of place and in
// place.
func TestDifferentialECB(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, kn := range availableKernels() {
		for _, keyLen := range []int{16, 24, 32} {
			for trial := 0; trial < 4; trial++ {
				key := randBytes(rng, keyLen)
				ours, err := newWithKernel(key, kn)
				if err != nil {
					t.Fatal(err)
				}
				ref, err := xtwofish.NewCipher(key)
				if err != nil {
					t.Fatal(err)
				}
				for n := 1; n <= 100; n++ {
					src := randBytes(rng, 16*n)
					want := make([]byte, len(src))
					for i := 0; i < len(src); i += 16 {
						ref.Encrypt(want[i:], src[i:])
					}
					// Out of place, into an unaligned dst longer than src whose
					// tail must survive.
					dstBuf := make([]byte, len(src)+16+3)
					for i := range dstBuf {
						dstBuf[i] = 0xA5
					}
					dst := dstBuf[3:]
					ours.EncryptBlocks(dst, src)
					if !bytes.Equal(dst[:len(src)], want) {
						t.Fatalf("%v key %d bytes, %d blocks: encryption differs from x/crypto", kn, keyLen, n)
					}
					if !bytes.Equal(dst[len(src):], bytes.Repeat([]byte{0xA5}, 16)) || !bytes.Equal(dstBuf[:3], []byte{0xA5, 0xA5, 0xA5}) {
						t.Fatalf("%v: EncryptBlocks wrote outside dst[:len(src)]", kn)
					}
					back := make([]byte, len(src))
					ours.DecryptBlocks(back, want)
					if !bytes.Equal(back, src) {
						t.Fatalf("%v key %d bytes, %d blocks: decryption differs", kn, keyLen, n)
					}
					// In place.
					buf := append([]byte{}, src...)
					ours.EncryptBlocks(buf, buf)
					if !bytes.Equal(buf, want) {
						t.Fatalf("%v key %d bytes, %d blocks: in-place encryption differs", kn, keyLen, n)
					}
					ours.DecryptBlocks(buf, buf)
					if !bytes.Equal(buf, src) {
						t.Fatalf("%v key %d bytes, %d blocks: in-place decryption differs", kn, keyLen, n)
					}
				}
			}
		}
	}
}

// TestDifferentialXTS compares EncryptXTS/DecryptXTS with golang.org/x/crypto/xts
// over x/crypto's Twofish: the initial tweak of sector s is E_K2(s), which
// x/crypto computes itself and which is handed to us already encrypted.
func TestDifferentialXTS(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, kn := range availableKernels() {
		for _, keyLen := range []int{16, 24, 32} {
			// 512 and 4096 are the real sizes; the others take the paths for
			// sectors that are not whole 32-block runs.
			for _, sectorSize := range []int{16, 32, 48, 512, 528, 1072, 4096} {
				k1, k2 := randBytes(rng, keyLen), randBytes(rng, keyLen)
				ref, err := xts.NewCipher(newXTwofish, append(append([]byte{}, k1...), k2...))
				if err != nil {
					t.Fatal(err)
				}
				ours, _ := newWithKernel(k1, kn)
				tweakCipher, _ := xtwofish.NewCipher(k2)
				for _, sectors := range []int{1, 2, 3, 5} {
					first := rng.Uint64() >> 1
					src := randBytes(rng, sectors*sectorSize)
					want := make([]byte, len(src))
					tweaks := make([]byte, 16*sectors)
					for s := 0; s < sectors; s++ {
						ref.Encrypt(want[s*sectorSize:(s+1)*sectorSize], src[s*sectorSize:(s+1)*sectorSize], first+uint64(s))
						var sn [16]byte
						binary.LittleEndian.PutUint64(sn[:], first+uint64(s))
						tweakCipher.Encrypt(tweaks[16*s:], sn[:])
					}
					got := make([]byte, len(src))
					ours.EncryptXTS(got, src, tweaks, sectorSize)
					if !bytes.Equal(got, want) {
						t.Fatalf("%v key %d, sector %d x %d: XTS encryption differs from x/crypto/xts", kn, keyLen, sectorSize, sectors)
					}
					ours.DecryptXTS(got, got, tweaks, sectorSize)
					if !bytes.Equal(got, src) {
						t.Fatalf("%v key %d, sector %d x %d: in-place XTS decryption differs", kn, keyLen, sectorSize, sectors)
					}
					buf := append([]byte{}, src...)
					ours.EncryptXTS(buf, buf, tweaks, sectorSize)
					if !bytes.Equal(buf, want) {
						t.Fatalf("%v key %d, sector %d x %d: in-place XTS encryption differs", kn, keyLen, sectorSize, sectors)
					}
					back := make([]byte, len(src))
					ours.DecryptXTS(back, want, tweaks, sectorSize)
					if !bytes.Equal(back, src) {
						t.Fatalf("%v key %d, sector %d x %d: XTS decryption differs", kn, keyLen, sectorSize, sectors)
					}
				}
			}
		}
	}
}

// TestXTSTweakCarry pins the reduction of the tweak doubling with an
// all-ones initial tweak, where every doubling carries out of bit 127,
// against a per-block XTS written here with x/crypto's block cipher and a
// byte-wise doubling (TestDifferentialXTS covers random tweaks).
func TestXTSTweakCarry(t *testing.T) {
	key := make([]byte, 32)
	for _, kn := range availableKernels() {
		ours, _ := newWithKernel(key, kn)
		ref, _ := xtwofish.NewCipher(key)
		tweak := bytes.Repeat([]byte{0xFF}, 16)
		src := make([]byte, 512)
		got := make([]byte, 512)
		ours.EncryptXTS(got, src, tweak, 512)
		// Independent per-block XTS with x/crypto's block cipher and a
		// bit-by-bit doubling.
		t0 := append([]byte{}, tweak...)
		for j := 0; j < 32; j++ {
			var x [16]byte
			for i := range x {
				x[i] = src[16*j+i] ^ t0[i]
			}
			ref.Encrypt(x[:], x[:])
			for i := range x {
				x[i] ^= t0[i]
			}
			if !bytes.Equal(got[16*j:16*j+16], x[:]) {
				t.Fatalf("%v: block %d differs", kn, j)
			}
			carry := t0[15] >> 7
			for i := 15; i > 0; i-- {
				t0[i] = t0[i]<<1 | t0[i-1]>>7
			}
			t0[0] <<= 1
			if carry != 0 {
				t0[0] ^= 0x87
			}
		}
	}
}

func TestKeySizes(t *testing.T) {
	for n := 0; n <= 40; n++ {
		_, err := New(make([]byte, n))
		valid := n == 16 || n == 24 || n == 32
		if valid != (err == nil) {
			t.Errorf("New with %d-byte key: err = %v", n, err)
		}
	}
}

func TestMisusePanics(t *testing.T) {
	c, _ := New(make([]byte, 32))
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	mustPanic("partial block", func() { c.EncryptBlocks(make([]byte, 32), make([]byte, 17)) })
	mustPanic("short dst", func() { c.DecryptBlocks(make([]byte, 16), make([]byte, 32)) })
	mustPanic("XTS bad sector size", func() { c.EncryptXTS(make([]byte, 24), make([]byte, 24), make([]byte, 16), 24) })
	mustPanic("XTS tweak count", func() { c.DecryptXTS(make([]byte, 1024), make([]byte, 1024), make([]byte, 16), 512) })
	// Empty input is not misuse.
	c.EncryptBlocks(nil, nil)
	c.EncryptXTS(nil, nil, nil, 512)
}

// TestNoAllocations checks the hot paths allocate nothing.
func TestNoAllocations(t *testing.T) {
	for _, kn := range availableKernels() {
		c, _ := newWithKernel(make([]byte, 32), kn)
		buf := make([]byte, 4096)
		tweaks := make([]byte, 16)
		for name, f := range map[string]func(){
			"EncryptBlocks": func() { c.EncryptBlocks(buf, buf) },
			"DecryptBlocks": func() { c.DecryptBlocks(buf, buf) },
			"EncryptXTS":    func() { c.EncryptXTS(buf, buf, tweaks, 4096) },
			"DecryptXTS":    func() { c.DecryptXTS(buf, buf, tweaks, 4096) },
		} {
			if n := testing.AllocsPerRun(20, f); n != 0 {
				t.Errorf("%v %s: %v allocations per call", kn, name, n)
			}
		}
	}
}

func newXTwofish(key []byte) (cipher.Block, error) { return xtwofish.NewCipher(key) }

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// FuzzAgainstXCrypto compares every kernel with x/crypto/twofish on fuzzed
// keys and data (run longer with go test -fuzz FuzzAgainstXCrypto).
func FuzzAgainstXCrypto(f *testing.F) {
	f.Add(make([]byte, 16), make([]byte, 16))
	f.Add(bytes.Repeat([]byte{0xFF}, 32), bytes.Repeat([]byte{0x5A}, 16*33))
	f.Add(make([]byte, 24), make([]byte, 16*9))
	f.Fuzz(func(t *testing.T, key, data []byte) {
		switch len(key) {
		case 16, 24, 32:
		default:
			return
		}
		data = data[:len(data)/16*16]
		ref, err := xtwofish.NewCipher(key)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, len(data))
		for i := 0; i < len(data); i += 16 {
			ref.Encrypt(want[i:], data[i:])
		}
		for _, kn := range availableKernels() {
			c, err := newWithKernel(key, kn)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(data))
			c.EncryptBlocks(got, data)
			if !bytes.Equal(got, want) {
				t.Fatalf("%v: encryption differs from x/crypto", kn)
			}
			c.DecryptBlocks(got, got)
			if !bytes.Equal(got, data) {
				t.Fatalf("%v: decryption does not invert", kn)
			}
		}
	})
}
