package luks

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cryptvol/cryptvol/volume"
)

// MaxKeyfileSize is cryptsetup's default limit on how much of a key file
// is read (--keyfile-size-max, 8 MiB).
const MaxKeyfileSize = 8 << 20

// ReadKeyfile returns the bytes of a LUKS key file as cryptsetup's
// --key-file reads them: all of it (no line-ending handling), after
// skipping offset bytes, at most size bytes (0: to the end, up to 8 MiB).
// A file shorter than an explicit size is an error, as in cryptsetup.
func ReadKeyfile(path string, offset, size int64) ([]byte, error) {
	if offset < 0 || size < 0 {
		return nil, fmt.Errorf("key file %s: negative offset or size", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	defer f.Close()
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return nil, fmt.Errorf("key file %s: %w", path, err)
		}
	}
	limit := size
	if limit == 0 {
		limit = MaxKeyfileSize
	}
	if limit > MaxKeyfileSize {
		return nil, fmt.Errorf("key file %s: --keyfile-size %d exceeds the %d-byte limit", path, size, MaxKeyfileSize)
	}
	buf, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	switch {
	case size == 0 && int64(len(buf)) > MaxKeyfileSize:
		clear(buf)
		return nil, fmt.Errorf("key file %s is larger than %d bytes (use --keyfile-size)", path, MaxKeyfileSize)
	case size > 0 && int64(len(buf)) < size:
		clear(buf)
		return nil, fmt.Errorf("key file %s: cannot read %d bytes at offset %d (the file is too short)", path, size, offset)
	case size > 0:
		buf = buf[:size]
	}
	return buf, nil
}

// Passphrase returns the passphrase the credentials stand for on a LUKS
// volume: the single key file's bytes (cryptsetup's --key-file, with
// KeyfileOffset and KeyfileSize) or else the password. The caller wipes
// the result.
func Passphrase(c volume.Credentials) ([]byte, error) {
	switch len(c.Keyfiles) {
	case 0:
		if c.KeyfileOffset != 0 || c.KeyfileSize != 0 {
			return nil, errors.New("--keyfile-offset and --keyfile-size need a key file")
		}
		return append([]byte(nil), c.Password...), nil
	case 1:
		return ReadKeyfile(c.Keyfiles[0], c.KeyfileOffset, c.KeyfileSize)
	}
	return nil, fmt.Errorf("a LUKS keyslot takes one key file, not %d", len(c.Keyfiles))
}
