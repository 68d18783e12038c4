package exfat

import (
	_ "embed"
	"encoding/binary"
	"math/bits"
)

// defaultUpcase is the recommended up-case table of the specification
// (section 7.2.5.1), in the compressed form it gives there and that
// mkfs.exfat writes: 5,836 bytes, checksum 0xE619D30D. Format writes it;
// TestUpcaseTableMatchesMkfs compares it with mkfs.exfat's.
//
//go:embed upcase.bin
var defaultUpcase []byte

const defaultUpcaseChecksum = 0xE619D30D

// upcaseChecksum is the table checksum of section 7.2.2.
func upcaseChecksum(b []byte) uint32 {
	var sum uint32
	for _, c := range b {
		sum = bits.RotateLeft32(sum, -1) + uint32(c)
	}
	return sum
}

// upcaseTable maps UTF-16 code units to their upper case. Units past its
// end map to themselves.
type upcaseTable []uint16

// expandUpcase decompresses a table: a unit 0xFFFF followed by a count n
// stands for n units that map to themselves.
func expandUpcase(raw []byte) upcaseTable {
	t := make(upcaseTable, 0, 65536)
	for i := 0; i+1 < len(raw) && len(t) < 65536; i += 2 {
		v := binary.LittleEndian.Uint16(raw[i:])
		if v == 0xFFFF && i+3 < len(raw) {
			n := int(binary.LittleEndian.Uint16(raw[i+2:]))
			for k := 0; k < n && len(t) < 65536; k++ {
				t = append(t, uint16(len(t)))
			}
			i += 2
			continue
		}
		t = append(t, v)
	}
	return t
}

func (t upcaseTable) upper(u uint16) uint16 {
	if int(u) < len(t) {
		return t[u]
	}
	return u
}

// key is the lookup key of a name: its up-cased UTF-16 units as bytes, so
// names compare as every exFAT driver compares them.
func (t upcaseTable) key(units []uint16) string {
	b := make([]byte, 2*len(units))
	for i, u := range units {
		binary.LittleEndian.PutUint16(b[2*i:], t.upper(u))
	}
	return string(b)
}

// nameHash is the NameHash of section 7.6.4: a 16-bit rotate-and-add over
// the bytes of the up-cased name.
func (t upcaseTable) nameHash(units []uint16) uint16 {
	var h uint16
	for _, u := range units {
		c := t.upper(u)
		h = bits.RotateLeft16(h, -1) + c&0xFF
		h = bits.RotateLeft16(h, -1) + c>>8
	}
	return h
}
