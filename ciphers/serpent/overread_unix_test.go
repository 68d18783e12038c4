//go:build unix

package serpent

import (
	"bytes"
	"os"
	"syscall"
	"testing"
)

// TestXTSReadsNoTweakPastTheEnd puts the tweaks at the very end of a page
// followed by an inaccessible one and runs every path's XTS over sector
// sizes each kernel takes whole: the tweak generators run a batch ahead of
// the cipher, and once read the tweak after the last sector (a fault under
// Wine, where the heap page after it happened to be unmapped).
func TestXTSReadsNoTweakPastTheEnd(t *testing.T) {
	page := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[page:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	saved := impl
	defer func() { impl = saved }()
	c, _ := New(bytes.Repeat([]byte{7}, 32))
	for _, sectorSize := range []int{256, 512, 1024, 2048, 4096} {
		for _, sectors := range []int{1, 2, 3, 8, 128} {
			tweaks := mem[page-16*sectors : page]
			for i := range tweaks {
				tweaks[i] = byte(i * 13)
			}
			src := bytes.Repeat([]byte{0x5a}, sectorSize*sectors)
			impl = implGeneric
			want := make([]byte, len(src))
			c.EncryptXTS(want, src, tweaks, sectorSize)
			for _, i := range available() {
				impl = i
				got := make([]byte, len(src))
				c.EncryptXTS(got, src, tweaks, sectorSize)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: encrypt %d sectors of %d differs", i.name(), sectors, sectorSize)
				}
				c.DecryptXTS(got, got, tweaks, sectorSize)
				if !bytes.Equal(got, src) {
					t.Fatalf("%s: decrypt %d sectors of %d differs", i.name(), sectors, sectorSize)
				}
			}
		}
	}
}
