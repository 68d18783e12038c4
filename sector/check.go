package sector

import "fmt"

const (
	// maxSectorSize bounds the sector sizes the constructors accept; 4096 is
	// the largest dm-crypt and VeraCrypt use.
	maxSectorSize = 4096
	// chunkBytes is how much data a mode processes per scratch-buffer fill:
	// big enough that each cipher call covers many blocks, small enough for
	// the buffers to stay in L2.
	chunkBytes = 64 << 10
)

// checkSectorSize validates a sector size for a cipher of blockSize bytes.
func checkSectorSize(sectorSize, blockSize int) error {
	if blockSize <= 0 {
		return fmt.Errorf("sector: invalid cipher block size %d", blockSize)
	}
	if sectorSize < blockSize || sectorSize > maxSectorSize || sectorSize%blockSize != 0 {
		return fmt.Errorf("sector: sector size %d is not a multiple of %d between %d and %d",
			sectorSize, blockSize, blockSize, maxSectorSize)
	}
	return nil
}

// sectorsPerChunk is how many sectors one scratch chunk holds.
func sectorsPerChunk(sectorSize int) int {
	return max(1, chunkBytes/sectorSize)
}

// checkRun panics on a misuse of Mode.Encrypt/Decrypt: like crypto/cipher,
// the Mode interface has no error result, and these are programming errors.
func checkRun(dst, src []byte, sectorSize int) {
	if len(src)%sectorSize != 0 {
		panic(fmt.Sprintf("sector: input length %d is not a multiple of the %d-byte sector size",
			len(src), sectorSize))
	}
	if len(dst) < len(src) {
		panic("sector: output smaller than input")
	}
}

// sameStart reports whether a and b start at the same address, that is
// whether an operation is in place.
func sameStart(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}
