// Package sector implements the sector (data-unit) encryption modes used by
// disk encryption: XTS, CBC with plain/plain64/ESSIV/benbi IVs, LRW and ECB
// over ciphers.Block, Adiantum (each sector one wide block), VeraCrypt's
// XTS cascades (ChainXTS), and Parallel, which spreads large runs over
// cores. TrueCrypt 4.x/5.x's legacy CBC, with its per-sector whitening, is
// used by nothing else and lives with its format in volume/tcrypt
// (legacycbc.go).
//
// A Mode encrypts a whole run of sectors per call and derives each sector's
// tweak or IV from its number itself, so callers never loop over sectors.
//
// The modes hand their cipher many blocks per call (ciphers.Block), keep
// their scratch buffers in per-mode sync.Pools so a call allocates nothing
// once warm, and are safe for concurrent use on disjoint buffers. Parallel
// spreads large runs over several goroutines; Cascade chains modes the way
// VeraCrypt chains ciphers.
//
// Where a mode comes from:
//
//	TrueCrypt/VeraCrypt XTS, LUKS xts-plain64   NewXTS
//	LUKS xts-plain, xts-essiv:HASH               NewXTSWithIV
//	LUKS cbc-plain, cbc-plain64, cbc-essiv:HASH  NewCBC with IVPlain, IVPlain64, ESSIV
//	LUKS lrw-benbi, lrw-plain64                  NewLRW with IVBenbi, IVPlain64
//	LUKS ecb                                     NewECB
//	LUKS xchacha12,aes-adiantum-plain64 (and     NewAdiantum with IVPlain64
//	xchacha20,...): Adiantum, a wide-block cipher
package sector

// Mode encrypts and decrypts runs of whole sectors.
//
// len(src) must be a multiple of SectorSize(); dst may be src (in place).
// first is the number of the first sector in the run as the mode's IV/tweak
// source counts it (for TrueCrypt that is the byte offset in the host file
// divided by 512; for LUKS the sector number within the data segment).
// Sector i of the run uses first+i. Implementations must not allocate in
// steady state and must be safe for concurrent use on disjoint buffers.
//
// dst must be at least as long as src and must either be src or not overlap
// it. The modes of this package panic, like crypto/cipher, when src is not
// a whole number of sectors or dst is too short: those are programming
// errors, not data errors.
type Mode interface {
	SectorSize() int
	Encrypt(dst, src []byte, first uint64)
	Decrypt(dst, src []byte, first uint64)
}
