package argon2

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// adviseHugePages asks the kernel to back the matrix with transparent huge
// pages when they are available only on request (THP "madvise" mode, the
// Debian default). Argon2 reads 1 KiB blocks at random offsets across the
// whole matrix; with 4 KiB pages nearly every reference misses the TLB,
// and filling 416 MiB costs a hundred thousand page faults. It is only a
// hint: failure changes nothing but speed.
func adviseHugePages(mem []block) {
	const huge = 2 << 20
	if len(mem) == 0 {
		return
	}
	base := unsafe.Pointer(&mem[0])
	start := uintptr(base)
	end := start + uintptr(len(mem))*unsafe.Sizeof(mem[0])
	first := (start + huge - 1) &^ (huge - 1) // madvise needs aligned ranges
	last := end &^ (huge - 1)
	if last <= first {
		return
	}
	region := unsafe.Slice((*byte)(unsafe.Add(base, first-start)), last-first)
	unix.Madvise(region, unix.MADV_HUGEPAGE)
}
