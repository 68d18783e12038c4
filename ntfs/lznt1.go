package ntfs

import (
	"encoding/binary"
	"fmt"
)

// decompressLZNT1 decodes LZNT1 data (as in [MS-XCA] 2.5) from src into
// dst and returns the number of bytes written. src is a sequence of
// chunks, each with a 16-bit header: the low 12 bits are the chunk's
// size minus 3, bit 15 says whether it is compressed; a zero header ends
// the data. A compressed chunk decodes to at most 4096 bytes: groups of a
// flag byte and eight tokens, a literal byte for each clear bit and a
// 16-bit back reference for each set bit, whose split between offset and
// length depends on how far into the chunk the output is.
func decompressLZNT1(dst, src []byte) (int, error) {
	out := 0
	for p := 0; p+2 <= len(src); {
		h := binary.LittleEndian.Uint16(src[p:])
		if h == 0 {
			break
		}
		size := int(h&0xFFF) + 1
		p += 2
		if p+size > len(src) {
			return out, fmt.Errorf("%w: LZNT1 chunk runs past its data", ErrCorrupt)
		}
		chunk := src[p : p+size]
		p += size
		if h&0x8000 == 0 { // stored: 4096 literal bytes
			if out+len(chunk) > len(dst) {
				return out, fmt.Errorf("%w: LZNT1 data larger than its unit", ErrCorrupt)
			}
			out += copy(dst[out:], chunk)
			continue
		}
		start := out
		limit := min(len(dst), start+4096)
		for q := 0; q < len(chunk); {
			flags := chunk[q]
			q++
			for bit := 0; bit < 8 && q < len(chunk); bit++ {
				if flags&(1<<bit) == 0 {
					if out >= limit {
						return out, fmt.Errorf("%w: LZNT1 chunk decodes past 4096 bytes", ErrCorrupt)
					}
					dst[out] = chunk[q]
					out++
					q++
					continue
				}
				if q+2 > len(chunk) {
					return out, fmt.Errorf("%w: LZNT1 token cut short", ErrCorrupt)
				}
				tok := int(binary.LittleEndian.Uint16(chunk[q:]))
				q += 2
				pos := out - start
				if pos == 0 {
					return out, fmt.Errorf("%w: LZNT1 back reference at the start of a chunk", ErrCorrupt)
				}
				lenBits := 12
				for x := pos - 1; x >= 0x10; x >>= 1 {
					lenBits--
				}
				length := tok&(1<<lenBits-1) + 3
				disp := tok>>lenBits + 1
				if disp > pos || out+length > limit {
					return out, fmt.Errorf("%w: LZNT1 back reference out of range", ErrCorrupt)
				}
				for i := 0; i < length; i++ { // may overlap: byte by byte
					dst[out] = dst[out-disp]
					out++
				}
			}
		}
	}
	return out, nil
}
