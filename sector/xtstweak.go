package sector

import "encoding/binary"

// XTS tweaks are elements of GF(2^128) stored little-endian (IEEE 1619
// section 5.2): byte 0 holds the lowest coefficients. Held as two uint64
// halves, multiplying by the primitive element α is a 128-bit left shift
// with the carried-out bit folded back as x^7+x^2+x+1 (0x87). On 32-bit
// targets each uint64 is a register pair, still without branches or tables.

// mulAlpha returns (lo, hi)·α.
func mulAlpha(lo, hi uint64) (uint64, uint64) {
	carry := hi >> 63
	hi = hi<<1 | lo>>63
	lo = lo<<1 ^ (0x87 & -carry)
	return lo, hi
}

// xtsMask prepares the generic XTS path for len(tweaks)/16 sectors: for
// block j of sector i it stores T_i·α^j in mask and src⊕T_i·α^j in dst,
// where tweaks holds the encrypted initial tweak T_i of each sector. dst may
// be src; mask must not overlap either.
func xtsMask(dst, src, mask, tweaks []byte, sectorSize int) {
	le := binary.LittleEndian
	for i := 0; i+16 <= len(tweaks); i += 16 {
		lo := le.Uint64(tweaks[i:])
		hi := le.Uint64(tweaks[i+8:])
		off := i / 16 * sectorSize
		m := mask[off : off+sectorSize]
		d := dst[off:][:len(m)]
		s := src[off:][:len(m)]
		for j := 0; j+16 <= len(m); j += 16 {
			mb, db, sb := m[j:j+16], d[j:j+16], s[j:j+16]
			le.PutUint64(mb, lo)
			le.PutUint64(mb[8:], hi)
			le.PutUint64(db, le.Uint64(sb)^lo)
			le.PutUint64(db[8:], le.Uint64(sb[8:])^hi)
			lo, hi = mulAlpha(lo, hi)
		}
	}
}
