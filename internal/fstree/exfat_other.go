//go:build !linux

package fstree

// MakeExFAT skips: exfat-fuse on a loop device is Linux only.
func MakeExFAT(t T, img, src string, size int64) {
	t.Skipf("building exFAT images through exfat-fuse needs Linux")
}

// ExFATFuse skips: exfat-fuse on a loop device is Linux only.
func ExFATFuse(t T, img string, readOnly bool) (string, func()) {
	t.Skipf("exfat-fuse on a loop device needs Linux")
	return "", func() {}
}
