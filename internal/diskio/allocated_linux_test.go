package diskio

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// checkAllocated requires every byte of p to be allocated when fallocate
// works on its filesystem (probed on a file of its own).
func checkAllocated(t *testing.T, p string, fi os.FileInfo, size int64) {
	probe, err := os.Create(filepath.Join(filepath.Dir(p), "probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if err := unix.Fallocate(int(probe.Fd()), 0, 0, 4096); err != nil {
		t.Logf("fallocate does not work in %s (%v): allocation not checked", filepath.Dir(p), err)
		return
	}
	if got := fi.Sys().(*syscall.Stat_t).Blocks * 512; got < size {
		t.Errorf("%d of %d bytes allocated", got, size)
	}
}
