package volume

import (
	"errors"
	"io"
)

// keylessDriver is implemented by drivers whose volumes can open with no
// secret at all (a BitLocker volume whose protector is a clear key, left
// by a suspended or interrupted encryption).
type keylessDriver interface {
	Keyless(hdr Device) bool
}

// OpensWithoutCredentials reports whether the volume at path opens with
// empty credentials, so that a caller need not ask for a password. It
// reads only unencrypted metadata.
func OpensWithoutCredentials(path string, o Options) bool {
	dev, err := OpenDevice(path, true)
	if err != nil {
		return false
	}
	defer dev.Close()
	head := make([]byte, 4096)
	n, err := dev.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	ds, err := candidates(o.Type, head[:n], dev)
	if err != nil {
		return false
	}
	for _, d := range ds {
		if k, ok := d.(keylessDriver); ok && k.Keyless(dev) {
			return true
		}
	}
	return false
}
