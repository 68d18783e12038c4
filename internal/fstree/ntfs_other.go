//go:build !linux

package fstree

// MakeNTFS needs ntfs-3g's FUSE mount and its extended attributes, which
// this test helper drives on Linux only.
func MakeNTFS(t T, img, src string, size int64, extra []string, reparse bool) map[string]uint32 {
	t.Skipf("building NTFS images needs ntfs-3g on Linux")
	return nil
}
