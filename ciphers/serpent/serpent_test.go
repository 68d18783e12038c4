package serpent

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"testing"
)

// specSboxes are the S-boxes as printed in the Serpent paper (Anderson,
// Biham, Knudsen, 1998), kept here independently of the circuit generator.
var specSboxes = [8][16]uint32{
	{3, 8, 15, 1, 10, 6, 5, 11, 14, 13, 4, 2, 7, 0, 9, 12},
	{15, 12, 2, 7, 9, 0, 5, 10, 1, 11, 14, 8, 6, 13, 3, 4},
	{8, 6, 7, 9, 3, 12, 10, 15, 13, 1, 14, 4, 0, 11, 5, 2},
	{0, 15, 11, 8, 12, 9, 6, 3, 13, 1, 2, 4, 10, 7, 5, 14},
	{1, 15, 8, 3, 12, 0, 11, 6, 2, 5, 4, 10, 9, 14, 7, 13},
	{15, 5, 2, 11, 4, 10, 9, 12, 0, 3, 14, 8, 13, 6, 7, 1},
	{7, 2, 12, 5, 8, 4, 6, 11, 14, 9, 1, 15, 13, 3, 10, 0},
	{1, 13, 15, 0, 14, 8, 2, 11, 7, 4, 12, 10, 9, 3, 5, 6},
}

// TestSboxCircuits checks every bitsliced S-box and inverse on all 16
// nibbles in every bit position at once: bit j of the words carries nibble
// (j + shift) mod 16.
func TestSboxCircuits(t *testing.T) {
	for i := 0; i < 8; i++ {
		for shift := uint32(0); shift < 16; shift++ {
			var x [4]uint32
			for j := uint32(0); j < 32; j++ {
				nib := (j + shift) % 16
				for b := 0; b < 4; b++ {
					x[b] |= (nib >> b & 1) << j
				}
			}
			var y [4]uint32
			y[0], y[1], y[2], y[3] = sboxForward[i](x[0], x[1], x[2], x[3])
			var z [4]uint32
			z[0], z[1], z[2], z[3] = sboxInverse[i](y[0], y[1], y[2], y[3])
			for j := uint32(0); j < 32; j++ {
				nib := (j + shift) % 16
				var got uint32
				for b := 0; b < 4; b++ {
					got |= (y[b] >> j & 1) << b
				}
				if got != specSboxes[i][nib] {
					t.Fatalf("S%d(%d) = %d, want %d", i, nib, got, specSboxes[i][nib])
				}
			}
			if z != x {
				t.Fatalf("inverse S%d does not undo S%d", i, i)
			}
		}
	}
}

func TestKeySizes(t *testing.T) {
	for n := 0; n <= 40; n++ {
		_, err := New(make([]byte, n))
		valid := n == 16 || n == 24 || n == 32
		if valid != (err == nil) {
			t.Errorf("key of %d bytes: err = %v", n, err)
		}
	}
}

func TestImplementation(t *testing.T) {
	want := available()[len(available())-1].name()
	if got := Implementation(); got != want {
		t.Errorf("Implementation() = %q, want %q", got, want)
	}
}

// TestPathsAgree compares every vector path with the portable code on
// random keys and data of 1..100 blocks, out of place and in place.
func TestPathsAgree(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	saved := impl
	defer func() { impl = saved }()
	for n := 1; n <= 100; n++ {
		key := make([]byte, []int{16, 24, 32}[n%3])
		rnd.Read(key)
		c, _ := New(key)
		src := make([]byte, 16*n)
		rnd.Read(src)
		impl = implGeneric
		wantEnc := make([]byte, len(src))
		c.EncryptBlocks(wantEnc, src)
		wantDec := make([]byte, len(src))
		c.DecryptBlocks(wantDec, src)
		for _, i := range available() {
			impl = i
			// Out of place, into a larger buffer whose tail must survive.
			dst := bytes.Repeat([]byte{0xa5}, len(src)+16)
			c.EncryptBlocks(dst, src)
			if !bytes.Equal(dst[:len(src)], wantEnc) || dst[len(src)] != 0xa5 {
				t.Fatalf("%s: encrypt %d blocks differs from generic", i.name(), n)
			}
			c.DecryptBlocks(dst, src)
			if !bytes.Equal(dst[:len(src)], wantDec) {
				t.Fatalf("%s: decrypt %d blocks differs from generic", i.name(), n)
			}
			// In place, both directions.
			buf := append([]byte(nil), src...)
			c.EncryptBlocks(buf, buf)
			if !bytes.Equal(buf, wantEnc) {
				t.Fatalf("%s: in-place encrypt %d blocks differs", i.name(), n)
			}
			c.DecryptBlocks(buf, buf)
			if !bytes.Equal(buf, src) {
				t.Fatalf("%s: in-place decrypt %d blocks does not round-trip", i.name(), n)
			}
		}
	}
}

// referenceXTS is XTS one block at a time through the portable cipher, with
// the tweak doubled byte by byte as IEEE 1619 section 5.2 describes it.
func referenceXTS(c *Cipher, dst, src, tweaks []byte, sectorSize int, decrypt bool) {
	for s := 0; s < len(tweaks)/16; s++ {
		var t [16]byte
		copy(t[:], tweaks[16*s:])
		for off := 0; off < sectorSize; off += 16 {
			in := src[s*sectorSize+off:][:16]
			out := dst[s*sectorSize+off:][:16]
			var b [16]byte
			for i := range b {
				b[i] = in[i] ^ t[i]
			}
			if decrypt {
				decryptGeneric(&c.rk, b[:], b[:])
			} else {
				encryptGeneric(&c.rk, b[:], b[:])
			}
			for i := range b {
				out[i] = b[i] ^ t[i]
			}
			carry := t[15] >> 7
			for i := 15; i > 0; i-- {
				t[i] = t[i]<<1 | t[i-1]>>7
			}
			t[0] = t[0]<<1 ^ 0x87*carry
		}
	}
}

// TestXTS compares EncryptXTS/DecryptXTS on every path (fused kernels for
// sector sizes that are multiples of 256 or 512 bytes, the composition
// otherwise) with the block-at-a-time reference.
func TestXTS(t *testing.T) {
	rnd := rand.New(rand.NewSource(2))
	saved := impl
	defer func() { impl = saved }()
	for _, sectorSize := range []int{16, 48, 256, 272, 512, 768, 1024, 4096, 8192, 4096 + 512} {
		for _, sectors := range []int{1, 3} {
			key := make([]byte, 32)
			rnd.Read(key)
			c, _ := New(key)
			src := make([]byte, sectorSize*sectors)
			rnd.Read(src)
			tweaks := make([]byte, 16*sectors)
			rnd.Read(tweaks)
			binary.LittleEndian.PutUint64(tweaks[8:], ^uint64(0)) // carries on the first doublings
			wantEnc := make([]byte, len(src))
			referenceXTS(c, wantEnc, src, tweaks, sectorSize, false)
			wantDec := make([]byte, len(src))
			referenceXTS(c, wantDec, src, tweaks, sectorSize, true)
			for _, i := range available() {
				impl = i
				dst := make([]byte, len(src))
				c.EncryptXTS(dst, src, tweaks, sectorSize)
				if !bytes.Equal(dst, wantEnc) {
					t.Fatalf("%s: XTS encrypt, %d sectors of %d bytes, differs from reference", i.name(), sectors, sectorSize)
				}
				c.DecryptXTS(dst, src, tweaks, sectorSize)
				if !bytes.Equal(dst, wantDec) {
					t.Fatalf("%s: XTS decrypt, %d sectors of %d bytes, differs from reference", i.name(), sectors, sectorSize)
				}
				buf := append([]byte(nil), src...)
				c.EncryptXTS(buf, buf, tweaks, sectorSize)
				c.DecryptXTS(buf, buf, tweaks, sectorSize)
				if !bytes.Equal(buf, src) {
					t.Fatalf("%s: in-place XTS does not round-trip (%d bytes)", i.name(), sectorSize)
				}
			}
		}
	}
}

// TestNoAllocations checks the hot paths allocate nothing, tails included.
func TestNoAllocations(t *testing.T) {
	c, _ := New(make([]byte, 32))
	buf := make([]byte, 4096+16*5)
	tweaks := make([]byte, 32)
	forEachImpl(t, func(t *testing.T) {
		for _, n := range []int{16, 80, 4096 + 80} {
			if a := testing.AllocsPerRun(10, func() { c.EncryptBlocks(buf[:n], buf[:n]) }); a != 0 {
				t.Errorf("EncryptBlocks(%d bytes): %v allocations", n, a)
			}
			if a := testing.AllocsPerRun(10, func() { c.DecryptBlocks(buf[:n], buf[:n]) }); a != 0 {
				t.Errorf("DecryptBlocks(%d bytes): %v allocations", n, a)
			}
		}
		for _, sector := range []int{2048, 48} {
			if a := testing.AllocsPerRun(10, func() { c.EncryptXTS(buf[:2*sector], buf[:2*sector], tweaks, sector) }); a != 0 {
				t.Errorf("EncryptXTS(sector %d): %v allocations", sector, a)
			}
			if a := testing.AllocsPerRun(10, func() { c.DecryptXTS(buf[:2*sector], buf[:2*sector], tweaks, sector) }); a != 0 {
				t.Errorf("DecryptXTS(sector %d): %v allocations", sector, a)
			}
		}
	})
}

func TestBadLengthsPanic(t *testing.T) {
	c, _ := New(make([]byte, 16))
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
	mustPanic("XTS sector size", func() { c.EncryptXTS(make([]byte, 40), make([]byte, 40), make([]byte, 16), 40) })
	mustPanic("XTS tweak count", func() { c.EncryptXTS(make([]byte, 1024), make([]byte, 1024), make([]byte, 16), 512) })
}
