package fatcore

import (
	"crypto/rand"
	"encoding/binary"
)

// Serial is the volume serial number Format writes: the one asked for, or
// a random one when that is 0, as mkfs.fat and mkfs.exfat do, so that two
// volumes formatted alike can still be told apart.
func Serial(asked uint32) (uint32, error) {
	if asked != 0 {
		return asked, nil
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}
