// Package sector implements the sector (data-unit) encryption modes used by
// disk encryption: XTS, CBC with plain/plain64/ESSIV/benbi IVs, LRW, ECB and
// TrueCrypt's legacy CBC variants, over ciphers.Block.
//
// A Mode encrypts a whole run of sectors per call and derives each sector's
// tweak or IV from its number itself, so callers never loop over sectors.
package sector

// Mode encrypts and decrypts runs of whole sectors.
//
// len(src) must be a multiple of SectorSize(); dst may be src (in place).
// first is the number of the first sector in the run as the mode's IV/tweak
// source counts it (for TrueCrypt that is the byte offset in the host file
// divided by 512; for LUKS the sector number within the data segment).
// Sector i of the run uses first+i. Implementations must not allocate in
// steady state and must be safe for concurrent use on disjoint buffers.
type Mode interface {
	SectorSize() int
	Encrypt(dst, src []byte, first uint64)
	Decrypt(dst, src []byte, first uint64)
}
