package aes

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"math/bits"
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
	arch   archKeys // key forms of architecture-specific paths
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
	c.setupArchKeys()
	return c, nil
}

// Zero overwrites the key schedule. The Cipher must not be used afterwards.
func (c *Cipher) Zero() {
	c.enc = roundKeys{}
	c.dec = roundKeys{}
	c.bsEnc = [maxRounds + 1]state{}
	c.bsDec = [maxRounds + 1]state{}
	c.arch = archKeys{}
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

// encryptCBCGeneric chains block by block through the portable path (also
// for the SSE2 path, whose eight-block passes would waste seven blocks of
// work on every step of the serial chain).
func encryptCBCGeneric(c *Cipher, dst, src, iv []byte) {
	for i := 0; i < len(src); i += BlockSize {
		d := dst[i : i+BlockSize]
		subtle.XORBytes(d, src[i:i+BlockSize], iv)
		encryptBlocksGeneric(c, d, d)
		copy(iv, d)
	}
}

// encryptCBCByBlock chains one block at a time through the cipher's own
// encryptBlocks, for paths whose keys are not the portable path's (the
// ARMv8 instructions, the ARM tables) and that have no chain kernel.
func encryptCBCByBlock(c *Cipher, dst, src, iv []byte) {
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

// EncryptXTSPlain64 is EncryptXTS with the initial tweaks derived here:
// sector s of src (sectorSize bytes each) uses E_k2(first+s), the sector
// number as a 16-byte little-endian value (plain64). It returns false,
// doing nothing, if k2 is not a *Cipher. It implements
// ciphers.XTSPlain64Block.
//
// Where a kernel derives the tweaks itself (AES-NI), the call goes
// straight to it: next to half a microsecond per 4 KiB, each call level
// and argument spill of the glue costs about a percent.
func (c *Cipher) EncryptXTSPlain64(dst, src []byte, k2 any, first uint64, sectorSize int) bool {
	if t, ok := k2.(*Cipher); ok && c.plain64Fused(t, len(dst), len(src), sectorSize) {
		c.plain64Encrypt(dst, src, t, first, sectorSize)
		return true
	}
	return c.xtsPlain64(dst, src, k2, first, sectorSize, false)
}

// DecryptXTSPlain64 is the inverse of EncryptXTSPlain64.
func (c *Cipher) DecryptXTSPlain64(dst, src []byte, k2 any, first uint64, sectorSize int) bool {
	if t, ok := k2.(*Cipher); ok && c.plain64Fused(t, len(dst), len(src), sectorSize) {
		c.plain64Decrypt(dst, src, t, first, sectorSize)
		return true
	}
	return c.xtsPlain64(dst, src, k2, first, sectorSize, true)
}

// plain64Batch is how many sectors' tweaks one pass derives: they live in
// a stack buffer (the kernels do not retain it).
const plain64Batch = 32

func (c *Cipher) xtsPlain64(dst, src []byte, k2 any, first uint64, sectorSize int, decrypt bool) bool {
	t, ok := k2.(*Cipher)
	if !ok {
		return false
	}
	// Sector counts by shift for the usual power-of-two sizes: a 64-bit
	// division costs as much as the rest of this function's bookkeeping.
	shift := -1
	if sectorSize > 0 && sectorSize&(sectorSize-1) == 0 {
		shift = bits.TrailingZeros(uint(sectorSize))
	}
	if sectorSize <= 0 || sectorSize%BlockSize != 0 ||
		(shift >= 0 && len(src)&(sectorSize-1) != 0) || (shift < 0 && len(src)%sectorSize != 0) {
		panic(errSectorSize)
	}
	if len(dst) < len(src) {
		panic(errShortDst)
	}
	var tw [16 * plain64Batch]byte
	used := 0
	for len(src) > 0 {
		var n int
		if shift >= 0 {
			n = len(src) >> shift
		} else {
			n = len(src) / sectorSize
		}
		n = min(n, plain64Batch)
		for i := 0; i < n; i++ {
			b := (*[16]byte)(tw[16*i:])
			binary.LittleEndian.PutUint64(b[:8], first+uint64(i))
			binary.LittleEndian.PutUint64(b[8:], 0)
		}
		tweaks, size := tw[:16*n], n*sectorSize
		used = max(used, 16*n)
		t.encryptBlocks(tweaks, tweaks)
		if decrypt {
			c.decryptXTS(dst[:size], src[:size], tweaks, sectorSize)
		} else {
			c.encryptXTS(dst[:size], src[:size], tweaks, sectorSize)
		}
		dst, src, first = dst[size:], src[size:], first+uint64(n)
	}
	clear(tw[:used])
	return true
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
