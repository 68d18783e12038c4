//go:build unix

package aes

import (
	"bytes"
	"os"
	"syscall"
	"testing"
)

// TestXTSReadsNoTweakPastTheEnd puts the tweaks, the source and the
// destination each at the very end of a page followed by an inaccessible
// one, and runs every path's XTS over several sector sizes and counts: a
// kernel that reads ahead (a next tweak, a next run) faults here. Serpent's
// kernels did.
func TestXTSReadsNoTweakPastTheEnd(t *testing.T) {
	page := os.Getpagesize()
	guarded := func(n int) []byte {
		size := (n + page - 1) / page * page
		mem, err := syscall.Mmap(-1, 0, size+page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			t.Skipf("mmap: %v", err)
		}
		t.Cleanup(func() { syscall.Munmap(mem) })
		if err := syscall.Mprotect(mem[size:], syscall.PROT_NONE); err != nil {
			t.Skipf("mprotect: %v", err)
		}
		return mem[size-n : size]
	}
	forEachImpl(t, func(t *testing.T, impl implementation) {
		c, _ := newWithImpl(bytes.Repeat([]byte{7}, 32), impl)
		ref, _ := newWithImpl(bytes.Repeat([]byte{7}, 32), implGeneric)
		for _, sectorSize := range []int{512, 4096} {
			for _, sectors := range []int{1, 2, 3, 7, 8, 9, 33} {
				tweaks := guarded(16 * sectors)
				for i := range tweaks {
					tweaks[i] = byte(i * 13)
				}
				src := guarded(sectorSize * sectors)
				for i := range src {
					src[i] = byte(i * 7)
				}
				want := make([]byte, len(src))
				ref.EncryptXTS(want, src, tweaks, sectorSize)
				dst := guarded(len(src))
				c.EncryptXTS(dst, src, tweaks, sectorSize)
				if !bytes.Equal(dst, want) {
					t.Fatalf("encrypt %d sectors of %d differs", sectors, sectorSize)
				}
				c.DecryptXTS(dst, dst, tweaks, sectorSize)
				if !bytes.Equal(dst, src) {
					t.Fatalf("decrypt %d sectors of %d differs", sectors, sectorSize)
				}
			}
		}
	})
}
