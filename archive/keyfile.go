package archive

import (
	"fmt"
	"io"
	"os"
)

// KeyFileSizeError is a key file too short or too long to be one (see
// Credentials): Size is its length, counted up to one byte past the
// limit.
type KeyFileSizeError struct {
	Path string
	Size int
}

func (e *KeyFileSizeError) Error() string {
	return fmt.Sprintf("key file %s: want 32 bytes to 1 MiB of random data, not %d bytes", e.Path, e.Size)
}

// ReadKeyFile reads the key file at path for Credentials.KeyFile, reading
// no more than one byte past the largest size a key file may have.
func ReadKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	if len(b) < minKeyFile || len(b) > maxKeyFile {
		return nil, &KeyFileSizeError{Path: path, Size: len(b)}
	}
	return b, nil
}
