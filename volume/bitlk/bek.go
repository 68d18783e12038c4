package bitlk

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A startup key is a .BEK file (BitLocker External Key), named after the
// GUID of the protector it opens: a 48-byte header like the FVE metadata
// header, then one "external key" entry holding the 256-bit key that
// decrypts that protector's VMK directly (no stretch).

const (
	bekHeaderLen = 48
	// entryVolumeGUID is the entry Windows 11 adds to name the volume a
	// startup key belongs to (value type valueGUID).
	entryVolumeGUID = 0x0019
	valueGUID       = 0x0017
)

// BEK is a parsed startup key file.
type BEK struct {
	// ID is the GUID of the protector the key opens.
	ID GUID
	// Volume is the GUID of the volume, when the file names it.
	Volume    GUID
	hasVolume bool
	Name      string
	key       []byte
}

var errNotBEK = errors.New("not a BitLocker startup key (.BEK) file")

// ParseBEK reads a startup key file's content.
func ParseBEK(b []byte) (*BEK, error) {
	le := binary.LittleEndian
	if len(b) < bekHeaderLen+entryHeaderLen || le.Uint32(b[8:]) != bekHeaderLen {
		return nil, errNotBEK
	}
	if size := le.Uint32(b); int(size) != len(b) {
		return nil, fmt.Errorf("%w: it says it is %d bytes long, the file has %d", errNotBEK, size, len(b))
	}
	if v := le.Uint32(b[4:]); v != 1 {
		return nil, fmt.Errorf("startup key: unsupported .BEK version %d", v)
	}
	k := &BEK{ID: guidAt(b[16:])}
	entries, err := parseEntries(b[bekHeaderLen:])
	if err != nil || len(entries) == 0 || entries[0].typ != entryStartupKey || entries[0].value != valueExternalKey ||
		len(entries[0].data) < 24 {
		return nil, fmt.Errorf("%w: no external key entry", errNotBEK)
	}
	props, err := parseEntries(entries[0].data[24:])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotBEK, err)
	}
	for _, p := range props {
		switch {
		case p.value == valueKey && len(p.data) > 4 && k.key == nil:
			k.key = append([]byte(nil), p.data[4:]...)
		case p.value == valueString && k.Name == "":
			k.Name = utf16String(p.data)
		case p.typ == entryVolumeGUID && p.value == valueGUID && len(p.data) >= 16:
			k.Volume, k.hasVolume = guidAt(p.data), true
		}
	}
	if len(k.key) != 32 {
		return nil, fmt.Errorf("%w: no 256-bit key in it", errNotBEK)
	}
	return k, nil
}

// Wipe zeroes the key.
func (k *BEK) Wipe() { clear(k.key) }
