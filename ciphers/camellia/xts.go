package camellia

import (
	"crypto/subtle"
	"encoding/binary"
)

// xtsGroup is how many bytes of XTS data are masked and encrypted together:
// the amd64 kernel's 64 blocks.
const xtsGroup = 64 * BlockSize

// EncryptXTS implements ciphers.XTSBlock: XTS encryption (IEEE 1619) of
// len(tweaks)/16 consecutive sectors of sectorSize bytes, tweaks holding
// each sector's already encrypted initial tweak. The tweaks of a group of
// 64 blocks are expanded into a small stack buffer and XORed in by the
// kernel itself, so the data is read and written once.
func (c *Cipher) EncryptXTS(dst, src, tweaks []byte, sectorSize int) {
	cryptXTS(&c.enc, dst, src, tweaks, sectorSize)
}

// DecryptXTS implements ciphers.XTSBlock, the inverse of EncryptXTS.
func (c *Cipher) DecryptXTS(dst, src, tweaks []byte, sectorSize int) {
	cryptXTS(&c.dec, dst, src, tweaks, sectorSize)
}

func cryptXTS(s *schedule, dst, src, tweaks []byte, sectorSize int) {
	if sectorSize <= 0 || sectorSize%BlockSize != 0 || len(tweaks)%16 != 0 ||
		len(src) != len(tweaks)/16*sectorSize {
		panic("camellia: XTS lengths do not match the sector size and tweak count")
	}
	if len(dst) < len(src) {
		panic("camellia: output smaller than input")
	}
	var mask [xtsGroup]byte
	var lo, hi uint64 // current tweak, little-endian halves
	sector, inSector := 0, 0
	for off := 0; off < len(src); off += xtsGroup {
		n := min(xtsGroup, len(src)-off)
		for i := 0; i < n; i += BlockSize {
			if inSector == 0 {
				lo = binary.LittleEndian.Uint64(tweaks[16*sector:])
				hi = binary.LittleEndian.Uint64(tweaks[16*sector+8:])
			}
			binary.LittleEndian.PutUint64(mask[i:], lo)
			binary.LittleEndian.PutUint64(mask[i+8:], hi)
			// Multiply by x in GF(2^128) mod x^128 + x^7 + x^2 + x + 1.
			carry := hi >> 63
			hi = hi<<1 | lo>>63
			lo = lo<<1 ^ carry*0x87
			if inSector += BlockSize; inSector == sectorSize {
				sector, inSector = sector+1, 0
			}
		}
		cryptMasked(s, dst[off:off+n], src[off:off+n], mask[:n])
	}
	clear(mask[:])
}

// cryptMaskedGeneric sets dst = crypt(src ^ mask) ^ mask.
func cryptMaskedGeneric(s *schedule, dst, src, mask []byte) {
	subtle.XORBytes(dst, src, mask)
	cryptBlocksGeneric(s, dst, dst)
	subtle.XORBytes(dst, dst, mask)
}
