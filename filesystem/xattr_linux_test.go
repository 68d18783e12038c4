package filesystem_test

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// setAttrib sets a file's Windows attributes through ntfs-3g's
// system.ntfs_attrib_be extended attribute.
func setAttrib(t testing.TB, p string, attr uint32) {
	t.Helper()
	b := binary.BigEndian.AppendUint32(nil, attr)
	if err := unix.Setxattr(p, "system.ntfs_attrib_be", b, 0); err != nil {
		t.Fatalf("setxattr %s: %v", p, err)
	}
}

func getAttrib(t testing.TB, p string) uint32 {
	t.Helper()
	b := make([]byte, 4)
	n, err := unix.Getxattr(p, "system.ntfs_attrib_be", b)
	if err != nil || n != 4 {
		t.Fatalf("getxattr %s: %v", p, err)
	}
	return binary.BigEndian.Uint32(b)
}

// setReparse makes p a reparse point through ntfs-3g's
// system.ntfs_reparse_data extended attribute.
func setReparse(t testing.TB, p string, data []byte) {
	t.Helper()
	if err := unix.Setxattr(p, "system.ntfs_reparse_data", data, 0); err != nil {
		t.Fatalf("setxattr reparse %s: %v", p, err)
	}
}
