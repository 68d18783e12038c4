package bitlk

import (
	"fmt"
	"sort"

	"github.com/cryptvol/cryptvol/volume"
)

// segments lays the volume out as cryptsetup's BITLK activation does
// with dm-crypt and dm-zero targets:
//
//   - the first HeaderSize bytes are the encrypted copy of the original
//     first sectors, read from HeaderOffset and decrypted with the IVs of
//     that place;
//   - the three FVE metadata areas (64 KiB each) and the place of that
//     copy read as zeros (the filesystem keeps them as reserved files);
//   - everything else is encrypted in place, sector n with IV n.
//
// size is the volume size (the device's, as dm-crypt sees it), a multiple
// of the sector size.
func (m *Metadata) segments(size int64) ([]volume.Segment, error) {
	ss := int64(m.SectorSize)
	if m.HeaderSize <= 0 || m.HeaderSize%ss != 0 || m.HeaderOffset%ss != 0 {
		return nil, damaged("the copy of the first sectors (%d bytes at %d) is not in whole %d-byte sectors", m.HeaderSize, m.HeaderOffset, ss)
	}
	zero := []volume.Segment{{Offset: m.HeaderOffset, Size: m.HeaderSize, Zero: true, Name: "BitLocker's copy of the volume's first sectors"}}
	for i, off := range m.MetadataOffsets {
		if off%ss != 0 {
			return nil, unsupported("FVE metadata block %d at %d is not aligned to the %d-byte sectors", i+1, off, ss)
		}
		zero = append(zero, volume.Segment{Offset: off, Size: fveAreaSize, Zero: true, Name: fmt.Sprintf("BitLocker metadata block %d", i+1)})
	}
	sort.Slice(zero, func(i, j int) bool { return zero[i].Offset < zero[j].Offset })
	at := m.HeaderSize // the relocated first sectors come first
	var out []volume.Segment
	out = append(out, volume.Segment{Size: m.HeaderSize, DevOffset: m.HeaderOffset, FirstSector: uint64(m.HeaderOffset / ss), Name: "the volume's first sectors"})
	for _, z := range zero {
		if z.Offset < at || z.Offset+z.Size > size {
			return nil, damaged("%s (%d bytes at %d) overlaps other metadata or lies outside the %d-byte volume", z.Name, z.Size, z.Offset, size)
		}
		if z.Offset > at {
			out = append(out, volume.Segment{Offset: at, Size: z.Offset - at, DevOffset: at, FirstSector: uint64(at / ss)})
		}
		out = append(out, z)
		at = z.Offset + z.Size
	}
	if at < size {
		out = append(out, volume.Segment{Offset: at, Size: size - at, DevOffset: at, FirstSector: uint64(at / ss)})
	}
	return out, nil
}
