// Package chacha20 is the ChaCha stream cipher: ChaCha20 as RFC 8439
// defines it (a 256-bit key, a 96-bit nonce and a 32-bit block counter),
// the same with 8 or 12 rounds, and XChaCha (a 192-bit nonce, through
// HChaCha), the stream cipher of Adiantum (XChaCha12 and XChaCha20).
//
// The key stream comes from kernels that make several blocks at once, one
// block per vector lane, chosen at start-up from golang.org/x/sys/cpu (so
// GODEBUG=cpu.avx512f=off,... masks them): on amd64 AVX-512 (16 blocks),
// AVX2 (8), SSSE3 or SSE2 (4); elsewhere a generic Go kernel, one block at
// a time. A stream uses the widest kernel for as much as it can and
// narrower ones for the rest. Where no kernel but the generic one exists,
// New's ChaCha20 streams are golang.org/x/crypto/chacha20 instead, which
// has assembly on arm64, ppc64le and s390x (BenchmarkXORKeyStream runs
// both).
//
// Other architectures plug in their kernels the way amd64 does
// (chacha20_amd64.go): a list of kernels the CPU supports, widest first,
// and a dispatch that calls them. Every kernel is checked against the
// generic one on random inputs (TestKernelsMatchGeneric).
package chacha20

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"

	xchacha20 "golang.org/x/crypto/chacha20"
)

const (
	KeySize    = 32
	NonceSize  = 12 // RFC 8439
	XNonceSize = 24 // XChaCha
	BlockSize  = 64

	// maxTailLump is the largest lump the narrowest kernel of an
	// architecture may make: a stream buffers one such lump.
	maxTailLump = 4 * BlockSize
)

// Cipher is a ChaCha key stream. It implements crypto/cipher.Stream.
type Cipher struct {
	state  [16]uint32 // state[12] is the counter of the next block to make
	rounds int
	// avail is how many more key stream bytes the 32-bit counter allows,
	// counting those buffered.
	avail uint64
	buf   [maxTailLump]byte // key stream made but not used: buf[used:end]
	used  int
	end   int
	slow  *xchacha20.Cipher // ChaCha20 where only the generic kernel exists
}

// New returns the ChaCha20 key stream for key and nonce whose first block
// has number counter. A 12-byte nonce is RFC 8439's; a 24-byte one makes
// XChaCha20.
func New(key, nonce []byte, counter uint32) (*Cipher, error) {
	return NewRounds(key, nonce, counter, 20)
}

// NewRounds is New for ChaCha with 8, 12 or 20 rounds: rounds 12 and a
// 24-byte nonce is Adiantum's XChaCha12.
func NewRounds(key, nonce []byte, counter uint32, rounds int) (*Cipher, error) {
	if len(key) != KeySize {
		return nil, errors.New("chacha20: key must be 32 bytes")
	}
	if len(nonce) != NonceSize && len(nonce) != XNonceSize {
		return nil, errors.New("chacha20: nonce must be 12 or 24 bytes")
	}
	if err := checkRounds(rounds); err != nil {
		return nil, err
	}
	c := &Cipher{rounds: rounds, avail: (1<<32 - uint64(counter)) * BlockSize}
	if rounds == 20 && !haveKernel() {
		s, err := xchacha20.NewUnauthenticatedCipher(key, nonce)
		if err != nil {
			return nil, err
		}
		s.SetCounter(counter)
		c.slow = s
		return c, nil
	}
	var k [8]uint32
	for i := range k {
		k[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	var n [3]uint32
	if len(nonce) == XNonceSize {
		// XChaCha: HChaCha of the key and the first 16 bytes is the key;
		// the last 8 are the last 8 of an RFC 8439 nonce.
		var hn [4]uint32
		for i := range hn {
			hn[i] = binary.LittleEndian.Uint32(nonce[4*i:])
		}
		hchacha(&k, &k, &hn, rounds)
		clear(hn[:])
		n[1] = binary.LittleEndian.Uint32(nonce[16:])
		n[2] = binary.LittleEndian.Uint32(nonce[20:])
	} else {
		for i := range n {
			n[i] = binary.LittleEndian.Uint32(nonce[4*i:])
		}
	}
	initState(&c.state, &k, counter, &n)
	clear(k[:])
	return c, nil
}

func checkRounds(rounds int) error {
	switch rounds {
	case 8, 12, 20:
		return nil
	}
	return errors.New("chacha20: rounds must be 8, 12 or 20")
}

// initState lays out a ChaCha state: the constants "expand 32-byte k",
// the key, the block counter and the nonce words.
func initState(s *[16]uint32, key *[8]uint32, counter uint32, nonce *[3]uint32) {
	s[0], s[1], s[2], s[3] = 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574
	copy(s[4:12], key[:])
	s[12] = counter
	copy(s[13:16], nonce[:])
}

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
	if c.used < c.end && len(src) > 0 {
		n := subtle.XORBytes(dst, src, c.buf[c.used:c.end])
		c.used += n
		dst, src = dst[n:], src[n:]
	}
	n := xorLumps(&c.state, c.rounds, dst, src)
	dst, src = dst[n:], src[n:]
	if len(src) > 0 {
		// Fewer bytes than the narrowest kernel's lump: make one lump and
		// keep what is not used. Blocks past the counter's end may be
		// made here but are never used: avail stops the caller first.
		k := kernels[len(kernels)-1]
		c.end = k.blocks * BlockSize
		k.xor(&c.state, c.rounds, c.buf[:c.end], zeros[:c.end])
		c.used = subtle.XORBytes(dst, src, c.buf[:c.end])
	}
}

// zeros is the input that turns a kernel's XOR into plain key stream.
var zeros [maxTailLump]byte
