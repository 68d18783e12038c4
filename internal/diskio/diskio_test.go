package diskio

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

func TestAlignedBuffer(t *testing.T) {
	for _, n := range []int{1, 4096, 1 << 20, 12345} {
		b := AlignedBuffer(n)
		if len(b) != n || cap(b) != n {
			t.Errorf("AlignedBuffer(%d): len %d cap %d", n, len(b), cap(b))
		}
		if a := uintptr(unsafe.Pointer(&b[0])) % 4096; a != 0 {
			t.Errorf("AlignedBuffer(%d) starts %d bytes past a 4 KiB boundary", n, a)
		}
	}
}

// TestCreateAllocated: the file has the size asked for, and on Linux,
// where the temporary directory's filesystem supports fallocate, its
// blocks are allocated rather than a hole.
func TestCreateAllocated(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	const size = 1 << 20
	if err := CreateAllocated(p, size); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != size {
		t.Fatalf("size %d, want %d", fi.Size(), size)
	}
	checkAllocated(t, p, fi, size)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	DropCache(f) // must not fail or panic on a read-only descriptor
	f.Close()
}
