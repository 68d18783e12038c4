//go:build unix

package volume

import (
	"fmt"
	"os"
	"syscall"
)

func fileID(f *os.File) (FileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return FileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, fmt.Errorf("%w: no device and inode for %s", ErrNoSnapshot, fi.Name())
	}
	return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}, nil
}

// openFileID opens path only to read its identity.
func openFileID(path string) (*os.File, error) { return os.Open(path) }
