package bitlk

import (
	"encoding/binary"
	"fmt"
)

// GUID is a Windows GUID as stored on disk: the first three fields
// little-endian, the last eight bytes in order.
type GUID [16]byte

// String formats the GUID the way Windows and cryptsetup print it.
func (g GUID) String() string {
	return fmt.Sprintf("%08x-%04x-%04x-%x-%x",
		binary.LittleEndian.Uint32(g[0:]), binary.LittleEndian.Uint16(g[4:]),
		binary.LittleEndian.Uint16(g[6:]), g[8:10], g[10:16])
}

func guidAt(b []byte) GUID {
	var g GUID
	copy(g[:], b)
	return g
}

var (
	// guidNormal marks a volume encrypted in full (the BitLocker
	// identifier 4967d63b-2e29-4ad8-8399-f6a339e3d001).
	guidNormal = GUID{0x3b, 0xd6, 0x67, 0x49, 0x29, 0x2e, 0xd8, 0x4a, 0x83, 0x99, 0xf6, 0xa3, 0x39, 0xe3, 0xd0, 0x01}
	// guidEOW marks "used space only" encryption that encrypts sectors
	// as they are written (encrypt-on-write).
	guidEOW = GUID{0x3b, 0x4d, 0xa8, 0x92, 0x80, 0xdd, 0x0e, 0x4d, 0x9e, 0x4e, 0xb1, 0xe3, 0x28, 0x4e, 0xae, 0xd8}
)
