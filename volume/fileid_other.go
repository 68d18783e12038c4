//go:build !unix && !windows

package volume

import (
	"fmt"
	"os"
)

func fileID(f *os.File) (FileID, error) {
	return FileID{}, fmt.Errorf("%w: no file identity on this system", ErrNoSnapshot)
}

func openFileID(path string) (*os.File, error) { return os.Open(path) }
