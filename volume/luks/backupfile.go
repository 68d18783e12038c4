package luks

import (
	"io"
	"os"
)

// IsHeaderFile reports whether the file name starts with a LUKS header,
// as a header backup (HeaderBackup) does: a device whose own header is
// gone is then restored as LUKS.
func IsHeaderFile(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := io.ReadFull(f, head)
	return IsLUKS(head[:n])
}
