package sector

import (
	"fmt"

	"github.com/cryptvol/cryptvol/ciphers"
)

// ecb encrypts every block independently (dm-crypt's "ecb", which takes no
// IV). It is here for completeness and for reading old volumes; it leaks
// equal plaintext blocks.
type ecb struct {
	b          ciphers.Block
	sectorSize int
}

// NewECB returns ECB over sectors of sectorSize bytes, a multiple of the
// cipher's block size up to 4096. The sector number is ignored.
func NewECB(b ciphers.Block, sectorSize int) (Mode, error) {
	if b == nil {
		return nil, fmt.Errorf("sector: ECB needs a cipher")
	}
	if err := checkSectorSize(sectorSize, b.BlockSize()); err != nil {
		return nil, err
	}
	return &ecb{b: b, sectorSize: sectorSize}, nil
}

// SectorSize implements Mode.
func (e *ecb) SectorSize() int { return e.sectorSize }

// Encrypt implements Mode with one EncryptBlocks call for the whole run.
func (e *ecb) Encrypt(dst, src []byte, _ uint64) {
	checkRun(dst, src, e.sectorSize)
	e.b.EncryptBlocks(dst[:len(src)], src)
}

// Decrypt implements Mode with one DecryptBlocks call for the whole run.
func (e *ecb) Decrypt(dst, src []byte, _ uint64) {
	checkRun(dst, src, e.sectorSize)
	e.b.DecryptBlocks(dst[:len(src)], src)
}
