// Package chacha20 is the ChaCha20 stream cipher of RFC 8439: a 256-bit
// key, a 96-bit nonce and a 32-bit block counter.
//
// On amd64 with AVX-512 it makes sixteen blocks at once in one kernel
// (chacha20_amd64.s, written by asmgen/gen.go), about eight times the
// speed of golang.org/x/crypto/chacha20, whose amd64 code is portable Go
// (BenchmarkXORKeyStream runs both).
// Everywhere else a Cipher is that x/crypto cipher, with its assembly where
// it has some (arm64, ppc64le, s390x).
package chacha20

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"

	xchacha20 "golang.org/x/crypto/chacha20"
)

const (
	KeySize   = 32
	NonceSize = 12
	BlockSize = 64

	// lumpSize is what the kernel makes per step: sixteen blocks.
	lumpSize = 16 * BlockSize
)

// Cipher is a ChaCha20 key stream. It implements crypto/cipher.Stream.
type Cipher struct {
	state [16]uint32 // state[12] is the counter of the next block to make
	// avail is how many more key stream bytes the 32-bit counter allows,
	// counting those buffered.
	avail uint64
	buf   [lumpSize]byte // key stream made but not used: buf[used:]
	used  int
	slow  *xchacha20.Cipher // when there is no fast kernel
}

// New returns the key stream for key and nonce whose first block has
// number counter.
func New(key, nonce []byte, counter uint32) (*Cipher, error) {
	if len(key) != KeySize {
		return nil, errors.New("chacha20: key must be 32 bytes")
	}
	if len(nonce) != NonceSize {
		return nil, errors.New("chacha20: nonce must be 12 bytes")
	}
	c := &Cipher{used: lumpSize, avail: (1<<32 - uint64(counter)) * BlockSize}
	if !haveKernel {
		s, err := xchacha20.NewUnauthenticatedCipher(key, nonce)
		if err != nil {
			return nil, err
		}
		s.SetCounter(counter)
		c.slow = s
		return c, nil
	}
	// "expand 32-byte k"
	c.state[0], c.state[1], c.state[2], c.state[3] = 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574
	for i := 0; i < 8; i++ {
		c.state[4+i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	c.state[12] = counter
	for i := 0; i < 3; i++ {
		c.state[13+i] = binary.LittleEndian.Uint32(nonce[4*i:])
	}
	return c, nil
}

// zeros is the input that turns the kernel's XOR into plain key stream.
var zeros [lumpSize]byte

// XORKeyStream XORs each byte of src with the next byte of the key stream
// and writes it to dst. dst and src must overlap entirely or not at all.
// It panics if dst is shorter than src, or if the key stream would run
// past block 2^32-1, where the counter ends (as x/crypto's does).
func (c *Cipher) XORKeyStream(dst, src []byte) {
	if len(dst) < len(src) {
		panic("chacha20: output smaller than input")
	}
	if c.slow != nil {
		c.slow.XORKeyStream(dst, src)
		return
	}
	if uint64(len(src)) > c.avail {
		panic("chacha20: counter overflow")
	}
	c.avail -= uint64(len(src))
	dst = dst[:len(src)]
	if c.used < lumpSize && len(src) > 0 {
		n := subtle.XORBytes(dst, src, c.buf[c.used:])
		c.used += n
		dst, src = dst[n:], src[n:]
	}
	if lumps := len(src) / lumpSize; lumps > 0 {
		xorKeyStream16AVX512(&c.state, &dst[0], &src[0], lumps)
		n := lumps * lumpSize
		dst, src = dst[n:], src[n:]
	}
	if len(src) > 0 {
		// Blocks past the counter's end may be made here but are never
		// used: avail stops the caller first.
		xorKeyStream16AVX512(&c.state, &c.buf[0], &zeros[0], 1)
		c.used = subtle.XORBytes(dst, src, c.buf[:])
	}
}
