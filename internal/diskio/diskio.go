// Package diskio holds the few disk operations the I/O benchmarks need
// and the standard library lacks: buffers aligned for direct I/O, files
// with their blocks allocated up front, and evicting a file from the page
// cache so that the next read comes from the disk.
package diskio

import (
	"os"
	"unsafe"
)

// AlignedBuffer returns n bytes starting on a 4 KiB boundary.
func AlignedBuffer(n int) []byte {
	b := make([]byte, n+4096)
	skip := int(4096-uintptr(unsafe.Pointer(&b[0]))%4096) % 4096
	return b[skip : skip+n : skip+n]
}

// CreateAllocated creates (or truncates) the file p with size bytes
// allocated where the system can (fallocate on Linux), so that writing it
// overwrites blocks in place as writing a partition does; elsewhere the
// file just gets that size.
func CreateAllocated(p string, size int64) error {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = allocate(f, size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
