package aes

import (
	"crypto/subtle"
	"errors"
	"strconv"
)

// BlockSize is the AES block size in bytes.
const BlockSize = 16

// Cipher is an AES key schedule with many-block ECB and fused XTS methods.
// It implements ciphers.Block and ciphers.XTSBlock. A Cipher is safe for
// concurrent use; its methods never allocate.
type Cipher struct {
	rounds int
	impl   implementation
	enc    roundKeys            // for AES instructions, FIPS-197 byte order
	dec    roundKeys            // equivalent-inverse-cipher keys (AESDEC / AESD)
	bsEnc  [maxRounds + 1]state // bitsliced keys for the generic and NEON paths
	bsDec  [maxRounds + 1]state
}

// KeySizeError reports a key length AES does not accept.
type KeySizeError int

func (k KeySizeError) Error() string {
	return "aes: invalid key size " + strconv.Itoa(int(k)) + " (want 16, 24 or 32 bytes)"
}

// New returns AES-128, AES-192 or AES-256 keyed with key (16, 24 or 32 bytes),
// using the fastest implementation this CPU supports.
func New(key []byte) (*Cipher, error) {
	return newWithImpl(key, defaultImpl)
}

func newWithImpl(key []byte, impl implementation) (*Cipher, error) {
	switch len(key) {
	case 16, 24, 32:
	default:
		return nil, KeySizeError(len(key))
	}
	c := &Cipher{impl: impl}
	c.rounds = expandKey(key, &c.enc, &c.dec)
	if impl == implGeneric || impl == implNEON { // bitsliced paths
		bitsliceKeys(&c.enc, c.rounds, &c.bsEnc, &c.bsDec)
	}
	return c, nil
}

// Zero overwrites the key schedule. The Cipher must not be used afterwards.
func (c *Cipher) Zero() {
	c.enc = roundKeys{}
	c.dec = roundKeys{}
	c.bsEnc = [maxRounds + 1]state{}
	c.bsDec = [maxRounds + 1]state{}
}

// BlockSize returns 16.
func (c *Cipher) BlockSize() int { return BlockSize }

// EncryptBlocks encrypts len(src)/16 independent blocks (ECB). len(src) must
// be a multiple of 16 and len(dst) >= len(src); dst may equal src.
func (c *Cipher) EncryptBlocks(dst, src []byte) {
	checkBlocks(dst, src)
	if len(src) > 0 {
		c.encryptBlocks(dst[:len(src)], src)
	}
}

// EncryptCBC encrypts len(src)/16 blocks in CBC mode, chaining from iv
// (16 bytes), and leaves the last ciphertext block in iv, so that the next
// call continues the chain. len(src) must be a multiple of 16 and
// len(dst) >= len(src); dst may equal src. CBC encryption is serial; this
// saves a call per block over EncryptBlocks (on amd64 one kernel runs the
// whole chain with the round keys held in registers).
func (c *Cipher) EncryptCBC(dst, src, iv []byte) {
	checkBlocks(dst, src)
	if len(iv) != BlockSize {
		panic("aes: CBC IV must be 16 bytes")
	}
	if len(src) > 0 {
		c.encryptCBC(dst[:len(src)], src, iv)
	}
}

// encryptCBCGeneric chains block by block through encryptBlocks.
func encryptCBCGeneric(c *Cipher, dst, src, iv []byte) {
	for i := 0; i < len(src); i += BlockSize {
		d := dst[i : i+BlockSize]
		subtle.XORBytes(d, src[i:i+BlockSize], iv)
		c.encryptBlocks(d, d)
		copy(iv, d)
	}
}

// DecryptBlocks decrypts len(src)/16 independent blocks (ECB).
func (c *Cipher) DecryptBlocks(dst, src []byte) {
	checkBlocks(dst, src)
	if len(src) > 0 {
		c.decryptBlocks(dst[:len(src)], src)
	}
}

// EncryptXTS encrypts len(tweaks)/16 sectors of sectorSize bytes each in XTS
// mode (IEEE 1619, without ciphertext stealing). tweaks[16s:16s+16] is sector
// s's encrypted initial tweak T0 = E_K2(sector number); block j of the sector
// uses T0·α^j. sectorSize must be a positive multiple of 16 and len(src) must
// be len(tweaks)/16*sectorSize; dst may equal src.
func (c *Cipher) EncryptXTS(dst, src, tweaks []byte, sectorSize int) {
	checkXTS(dst, src, tweaks, sectorSize)
	if len(src) > 0 {
		c.encryptXTS(dst[:len(src)], src, tweaks, sectorSize)
	}
}

// DecryptXTS is the inverse of EncryptXTS with the same tweaks.
func (c *Cipher) DecryptXTS(dst, src, tweaks []byte, sectorSize int) {
	checkXTS(dst, src, tweaks, sectorSize)
	if len(src) > 0 {
		c.decryptXTS(dst[:len(src)], src, tweaks, sectorSize)
	}
}

var (
	errPartialBlock = errors.New("aes: input not a whole number of blocks")
	errShortDst     = errors.New("aes: output smaller than input")
	errSectorSize   = errors.New("aes: sector size not a positive multiple of 16")
	errTweaks       = errors.New("aes: input length does not match the number of tweaks")
)

func checkBlocks(dst, src []byte) {
	if len(src)%BlockSize != 0 {
		panic(errPartialBlock)
	}
	if len(dst) < len(src) {
		panic(errShortDst)
	}
}

func checkXTS(dst, src, tweaks []byte, sectorSize int) {
	if sectorSize <= 0 || sectorSize%BlockSize != 0 {
		panic(errSectorSize)
	}
	if len(tweaks)%BlockSize != 0 || len(src) != len(tweaks)/BlockSize*sectorSize {
		panic(errTweaks)
	}
	if len(dst) < len(src) {
		panic(errShortDst)
	}
}
