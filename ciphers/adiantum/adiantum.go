// Package adiantum is Adiantum, the length-preserving tweakable encryption
// of Crowley and Biggers ("Adiantum: length-preserving encryption for
// entry-level processors", IACR ToSC 2018 issue 4), as Linux implements it
// in crypto/adiantum.c and dm-crypt uses it for disk sectors: XChaCha12 or
// XChaCha20 for the bulk of each message, NHPoly1305 and Poly1305 as the
// ε-almost-Δ-universal hash, and AES-256 on a single 16-byte block.
//
// A message of n >= 16 bytes is a left part L (n-16 bytes) and a right
// part R (the last 16); with the tweak T (32 bytes, as Linux fixes it) and
// additions and subtractions of 16-byte little-endian numbers mod 2^128:
//
//	H(T, L) = Poly1305_KT(bits(len L) as 128 bits, T) + NHPoly1305_KM(L)
//	P_M = P_R + H(T, P_L);  C_M = AES-256_KE(P_M)
//	C_L = P_L xor XChaCha(K_S, nonce C_M || 1 || 0...)
//	C_R = C_M - H(T, C_L)
//
// and K_E, K_T, K_M (with the NH key) are the first 1136 bytes of the
// XChaCha key stream of the 32-byte key K_S with the nonce 1 || 0....
//
// Sector encryption (EncryptSectors) works on many sectors per call: it
// hashes a batch of them, runs AES over all their middle blocks in one
// call (the bitsliced AES of CPUs without AES instructions does four
// blocks per pass), then makes each one's stream. The ChaCha and NH
// kernels are those of this CPU (see Implementation).
package adiantum

import (
	"encoding/binary"
	"errors"
	"math/bits"

	"github.com/cryptvol/cryptvol/ciphers/aes"
	"github.com/cryptvol/cryptvol/ciphers/chacha20"
)

const (
	// KeySize is the Adiantum key (the XChaCha key K_S).
	KeySize = 32
	// TweakSize is the tweak Linux gives Adiantum (dm-crypt's IV).
	TweakSize = 32
	// MinSize is the shortest message: the 16-byte right part alone.
	MinSize = 16

	blockKeySize = 32
	derivedSize  = blockKeySize + 16 + nhPolyKeySize // K_E, K_T, K_M || NH key

	// batch is how many sectors share one AES call.
	batch = 8
)

// Cipher is Adiantum keyed for one stream cipher (XChaCha12 or XChaCha20).
// It is safe for concurrent use; its methods never allocate.
type Cipher struct {
	stream    *chacha20.XKey
	block     *aes.Cipher
	headerKey polyKey   // K_T
	msgKey    nhPolyKey // K_M and the NH key
}

// New keys Adiantum with the 32-byte key and the stream cipher's rounds:
// 12 (xchacha12,aes-adiantum, the one Linux recommends) or 20.
func New(key []byte, rounds int) (*Cipher, error) {
	if len(key) != KeySize {
		return nil, errors.New("adiantum: key must be 32 bytes")
	}
	if rounds != 12 && rounds != 20 {
		return nil, errors.New("adiantum: the stream cipher is XChaCha12 or XChaCha20")
	}
	stream, err := chacha20.NewXKey(key, rounds)
	if err != nil {
		return nil, err
	}
	var derived [derivedSize]byte
	defer clear(derived[:])
	var nonce [chacha20.XNonceSize]byte
	nonce[0] = 1
	stream.XORKeyStream(derived[:], derived[:], &nonce)
	block, err := aes.New(derived[:blockKeySize])
	if err != nil {
		return nil, err
	}
	return &Cipher{
		stream:    stream,
		block:     block,
		headerKey: newPolyKey(derived[blockKeySize:]),
		msgKey:    newNHPolyKey(derived[blockKeySize+16:]),
	}, nil
}

// Rounds is the stream cipher's: 12 or 20.
func (c *Cipher) Rounds() int { return c.stream.Rounds() }

// Zero overwrites the keys. The Cipher must not be used afterwards.
func (c *Cipher) Zero() {
	c.stream.Zero()
	c.block.Zero()
	c.headerKey = polyKey{}
	c.msgKey.poly = polyKey{}
	c.msgKey.nh.zero()
}

// Encrypt encrypts the message src (at least 16 bytes) with the 32-byte
// tweak into dst, which must be src or not overlap it.
func (c *Cipher) Encrypt(dst, src, tweak []byte) {
	checkMessage(dst, src, len(src), tweak, 1)
	c.crypt(dst, src, len(src), tweak, false)
}

// Decrypt is the inverse of Encrypt.
func (c *Cipher) Decrypt(dst, src, tweak []byte) {
	checkMessage(dst, src, len(src), tweak, 1)
	c.crypt(dst, src, len(src), tweak, true)
}

// EncryptSectors encrypts len(src)/sectorSize messages of sectorSize bytes
// each (sectorSize a multiple of 16, at least 16), sector i with tweaks[32i:32i+32].
// dst must be src or not overlap it.
func (c *Cipher) EncryptSectors(dst, src []byte, sectorSize int, tweaks []byte) {
	checkSectors(dst, src, sectorSize, tweaks)
	c.crypt(dst, src, sectorSize, tweaks, false)
}

// DecryptSectors is the inverse of EncryptSectors with the same tweaks.
func (c *Cipher) DecryptSectors(dst, src []byte, sectorSize int, tweaks []byte) {
	checkSectors(dst, src, sectorSize, tweaks)
	c.crypt(dst, src, sectorSize, tweaks, true)
}

func checkMessage(dst, src []byte, size int, tweak []byte, n int) {
	if size < MinSize {
		panic("adiantum: message shorter than 16 bytes")
	}
	if len(tweak) != TweakSize*n {
		panic("adiantum: tweak must be 32 bytes")
	}
	if len(dst) < len(src) {
		panic("adiantum: output smaller than input")
	}
}

func checkSectors(dst, src []byte, sectorSize int, tweaks []byte) {
	if sectorSize < MinSize || sectorSize%16 != 0 {
		panic("adiantum: sector size must be a multiple of 16 bytes")
	}
	if len(src)%sectorSize != 0 {
		panic("adiantum: input is not a whole number of sectors")
	}
	checkMessage(dst, src, sectorSize, tweaks, len(src)/sectorSize)
}

// crypt runs len(src)/size messages of size bytes each through Adiantum,
// batch at a time.
func (c *Cipher) crypt(dst, src []byte, size int, tweaks []byte, decrypt bool) {
	bulk := size - 16
	// The stream may run to the next 64-byte block when the message has
	// room: the right part it covers is overwritten afterwards, and whole
	// blocks (4096 and 512 bytes are lumps of every kernel) cost less.
	streamLen := bulk
	if up := (bulk + 63) &^ 63; up <= size {
		streamLen = up
	}
	// Per sector of a batch: the header hash, the middle block (P_M, then
	// C_M, or C_M, then P_M) and the stream nonce C_M.
	var header [batch][2]uint64
	var middle, nonces [batch * 16]byte
	var nonce [chacha20.XNonceSize]byte
	nonce[16] = 1
	lenBlock := [16]byte{}
	binary.LittleEndian.PutUint64(lenBlock[:], uint64(bulk)*8)
	for len(src) > 0 {
		n := min(len(src)/size, batch)
		// First hash step: P_M = P_R + H(T, P_L) (or C_M from C).
		for i := 0; i < n; i++ {
			in := src[i*size : (i+1)*size]
			var s polyState
			s.blocks(&c.headerKey, lenBlock[:])
			s.blocks(&c.headerKey, tweaks[TweakSize*i:TweakSize*(i+1)])
			hl, hh := s.sum()
			header[i] = [2]uint64{hl, hh}
			ml, mh := c.msgKey.sum(in[:bulk])
			lo, hi := add128(hl, hh, ml, mh)
			rl := binary.LittleEndian.Uint64(in[bulk:])
			rh := binary.LittleEndian.Uint64(in[bulk+8:])
			lo, hi = add128(rl, rh, lo, hi)
			binary.LittleEndian.PutUint64(middle[16*i:], lo)
			binary.LittleEndian.PutUint64(middle[16*i+8:], hi)
		}
		m := middle[:16*n]
		if decrypt {
			copy(nonces[:], m)
			c.block.DecryptBlocks(m, m)
		} else {
			c.block.EncryptBlocks(m, m)
			copy(nonces[:], m)
		}
		for i := 0; i < n; i++ {
			in := src[i*size : (i+1)*size]
			out := dst[i*size : (i+1)*size]
			copy(nonce[:16], nonces[16*i:16*i+16])
			c.stream.XORKeyStream(out[:streamLen], in[:streamLen], &nonce)
			// Second hash step: C_R = C_M - H(T, C_L) (or P_R from P_M).
			ml, mh := c.msgKey.sum(out[:bulk])
			lo, hi := add128(header[i][0], header[i][1], ml, mh)
			lo, hi = sub128(binary.LittleEndian.Uint64(middle[16*i:]), binary.LittleEndian.Uint64(middle[16*i+8:]), lo, hi)
			binary.LittleEndian.PutUint64(out[bulk:], lo)
			binary.LittleEndian.PutUint64(out[bulk+8:], hi)
		}
		src, dst, tweaks = src[n*size:], dst[n*size:], tweaks[n*TweakSize:]
	}
	clear(middle[:])
	clear(nonce[:])
}

func add128(al, ah, bl, bh uint64) (uint64, uint64) {
	lo, c := bits.Add64(al, bl, 0)
	hi, _ := bits.Add64(ah, bh, c)
	return lo, hi
}

func sub128(al, ah, bl, bh uint64) (uint64, uint64) {
	lo, b := bits.Sub64(al, bl, 0)
	hi, _ := bits.Sub64(ah, bh, b)
	return lo, hi
}

// Implementation names the code paths of the stream cipher's and NH's
// kernels, e.g. "XChaCha avx2+sse2, NH avx2" (AES's is aes.Implementation).
func Implementation() string {
	return "XChaCha " + chacha20.XImplementation() + ", NH " + NHImplementation()
}

// NHImplementation names NH's kernel here: "avx2", "sse2" or "generic".
func NHImplementation() string { return nhImplName(nhImpl) }
