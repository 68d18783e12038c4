package tcrypt

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/cryptvol/cryptvol/ciphers"
)

// legacyCBC is the CBC mode of TrueCrypt 4.x/5.x: per sector, an IV and an
// 8-byte "whitening" value are derived from a 32-byte seed and the sector
// number; the whitening is XORed over the ciphertext. A cascade of ciphers
// with equal block sizes runs as one wide cipher inside a single CBC chain
// ("outer CBC"); a cascade mixing block sizes (with Blowfish) runs a whole
// CBC pass per cipher ("inner CBC"), each pass with its own whitening.
//
// It implements sector.Mode with 512-byte sectors; first counts sectors from
// the start of the host file, as TrueCrypt did.
type legacyCBC struct {
	ciphers []ciphers.Block // in the order encryption applies them
	outer   bool
	seed    [32]byte
}

func newLegacyCBC(bs []ciphers.Block, seed []byte) *legacyCBC {
	m := &legacyCBC{ciphers: bs, outer: len(bs) > 1}
	for _, b := range bs {
		if b.BlockSize() != bs[0].BlockSize() {
			m.outer = false
		}
	}
	copy(m.seed[:], seed)
	return m
}

func (m *legacyCBC) SectorSize() int { return 512 }

// sectorIVAndWhitening derives a sector's IV (block-size bytes) and 8-byte
// whitening: the seed's four 64-bit words are XORed with the sector number
// (little-endian), and the whitening is built from CRC-32s of the 32-bit
// words that the IV does not use.
func (m *legacyCBC) sectorIVAndWhitening(sector uint64, blockSize int, iv []byte, wh *[8]byte) {
	var x [32]byte
	for i := 0; i < 4; i++ {
		w := binary.LittleEndian.Uint64(m.seed[8*i:]) ^ sector
		binary.LittleEndian.PutUint64(x[8*i:], w)
	}
	crc := func(word int) uint32 { return crc32.ChecksumIEEE(x[4*word : 4*word+4]) }
	var w0, w1 uint32
	if blockSize == 8 {
		copy(iv, x[:8])
		w0, w1 = crc(2)^crc(5), crc(3)^crc(4)
	} else {
		copy(iv, x[:16])
		w0, w1 = crc(4)^crc(7), crc(5)^crc(6)
	}
	binary.LittleEndian.PutUint32(wh[0:], w0)
	binary.LittleEndian.PutUint32(wh[4:], w1)
}

func xorWhitening(buf []byte, wh *[8]byte) {
	for i := 0; i+8 <= len(buf); i += 8 {
		w := binary.LittleEndian.Uint64(buf[i:]) ^ binary.LittleEndian.Uint64(wh[:])
		binary.LittleEndian.PutUint64(buf[i:], w)
	}
}

// decryptCBC undoes whitening and CBC for one buffer with the given ciphers
// acting as one wide block cipher. ECB decryption of every block is
// independent, so it runs over the whole buffer per cipher; only the XOR
// with the previous ciphertext block is sequential.
func decryptCBC(buf []byte, bs []ciphers.Block, iv []byte, wh *[8]byte) {
	xorWhitening(buf, wh)
	size := bs[0].BlockSize()
	// Keep the ciphertext: block i's plaintext needs ciphertext i-1.
	var stack [4096]byte
	ct := stack[:len(buf)]
	if len(buf) > len(stack) {
		ct = make([]byte, len(buf))
	}
	copy(ct, buf)
	for i := len(bs) - 1; i >= 0; i-- {
		bs[i].DecryptBlocks(buf, buf)
	}
	for j := 0; j < size; j++ {
		buf[j] ^= iv[j]
	}
	for i := size; i < len(buf); i++ {
		buf[i] ^= ct[i-size]
	}
	clear(ct)
}

// encryptCBC is the inverse of decryptCBC.
func encryptCBC(buf []byte, bs []ciphers.Block, iv []byte, wh *[8]byte) {
	size := bs[0].BlockSize()
	prev := iv
	for off := 0; off < len(buf); off += size {
		blk := buf[off : off+size]
		for j := range blk {
			blk[j] ^= prev[j]
		}
		for _, b := range bs {
			b.EncryptBlocks(blk, blk)
		}
		prev = blk
	}
	xorWhitening(buf, wh)
}

func (m *legacyCBC) Decrypt(dst, src []byte, first uint64) {
	copy(dst, src)
	var iv [16]byte
	var wh [8]byte
	for off := 0; off+512 <= len(dst); off += 512 {
		sec := dst[off : off+512]
		n := first + uint64(off/512)
		if m.outer {
			m.sectorIVAndWhitening(n, m.ciphers[0].BlockSize(), iv[:], &wh)
			decryptCBC(sec, m.ciphers, iv[:], &wh)
			continue
		}
		for i := len(m.ciphers) - 1; i >= 0; i-- {
			c := m.ciphers[i : i+1]
			m.sectorIVAndWhitening(n, c[0].BlockSize(), iv[:], &wh)
			decryptCBC(sec, c, iv[:], &wh)
		}
	}
}

func (m *legacyCBC) Encrypt(dst, src []byte, first uint64) {
	copy(dst, src)
	var iv [16]byte
	var wh [8]byte
	for off := 0; off+512 <= len(dst); off += 512 {
		sec := dst[off : off+512]
		n := first + uint64(off/512)
		if m.outer {
			m.sectorIVAndWhitening(n, m.ciphers[0].BlockSize(), iv[:], &wh)
			encryptCBC(sec, m.ciphers, iv[:], &wh)
			continue
		}
		for i := range m.ciphers {
			c := m.ciphers[i : i+1]
			m.sectorIVAndWhitening(n, c[0].BlockSize(), iv[:], &wh)
			encryptCBC(sec, c, iv[:], &wh)
		}
	}
}

// decryptHeader decrypts a legacy CBC header: the IV is the seed's first
// block and the whitening the seed's bytes 8..15, the same for every pass.
func (m *legacyCBC) decryptHeader(buf []byte) {
	var wh [8]byte
	copy(wh[:], m.seed[8:16])
	if m.outer {
		decryptCBC(buf, m.ciphers, m.seed[:m.ciphers[0].BlockSize()], &wh)
		return
	}
	for i := len(m.ciphers) - 1; i >= 0; i-- {
		c := m.ciphers[i : i+1]
		decryptCBC(buf, c, m.seed[:c[0].BlockSize()], &wh)
	}
}

// encryptHeader is the inverse of decryptHeader (used by tests).
func (m *legacyCBC) encryptHeader(buf []byte) {
	var wh [8]byte
	copy(wh[:], m.seed[8:16])
	if m.outer {
		encryptCBC(buf, m.ciphers, m.seed[:m.ciphers[0].BlockSize()], &wh)
		return
	}
	for i := range m.ciphers {
		c := m.ciphers[i : i+1]
		encryptCBC(buf, c, m.seed[:c[0].BlockSize()], &wh)
	}
}
