package chacha20

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

// HChaCha computes HChaCha with rounds rounds (12 for XChaCha12, 20 for
// XChaCha20) of the 32-byte key and 16-byte input into dst (32 bytes):
// the ChaCha rounds over constants, key and input, without the final
// addition, words 0-3 and 12-15 (draft-irtf-cfrg-xchacha section 2.2).
func HChaCha(dst, key, input []byte, rounds int) error {
	if len(dst) < 32 || len(key) != KeySize || len(input) != 16 {
		return errors.New("chacha20: HChaCha needs a 32-byte key, a 16-byte input and a 32-byte output")
	}
	if err := checkRounds(rounds); err != nil {
		return err
	}
	var k [8]uint32
	var in [4]uint32
	for i := range k {
		k[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	for i := range in {
		in[i] = binary.LittleEndian.Uint32(input[4*i:])
	}
	hchacha(&k, &k, &in, rounds)
	for i, w := range k {
		binary.LittleEndian.PutUint32(dst[4*i:], w)
	}
	clear(k[:])
	return nil
}

// hchacha writes HChaCha(key, input) to out, which may be key.
func hchacha(out, key *[8]uint32, input *[4]uint32, rounds int) {
	var s [16]uint32
	s[0], s[1], s[2], s[3] = 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574
	copy(s[4:12], key[:])
	copy(s[12:16], input[:])
	permute(&s, rounds)
	copy(out[0:4], s[0:4])
	copy(out[4:8], s[12:16])
	clear(s[:])
}

// XKey is a ChaCha key prepared for many XChaCha streams, each read from
// its first block, as Adiantum makes one per sector. It is safe for
// concurrent use.
type XKey struct {
	key    [8]uint32
	rounds int
}

// NewXKey prepares key (32 bytes) for XChaCha with 12 or 20 rounds.
func NewXKey(key []byte, rounds int) (*XKey, error) {
	if len(key) != KeySize {
		return nil, errors.New("chacha20: key must be 32 bytes")
	}
	if rounds != 12 && rounds != 20 {
		return nil, errors.New("chacha20: XChaCha rounds must be 12 or 20")
	}
	k := &XKey{rounds: rounds}
	for i := range k.key {
		k.key[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	return k, nil
}

// Rounds is 12 or 20.
func (k *XKey) Rounds() int { return k.rounds }

// Zero overwrites the key. The XKey must not be used afterwards.
func (k *XKey) Zero() { clear(k.key[:]) }

// XORKeyStream XORs src with the XChaCha key stream of nonce (24 bytes),
// from block 0, into dst; dst and src must overlap entirely or not at all.
// It makes no allocation and no call per block: a length that is a whole
// number of the kernels' lumps (256 bytes covers every kernel but
// AVX-512's 1024) costs nothing beyond the kernels.
func (k *XKey) XORKeyStream(dst, src []byte, nonce *[XNonceSize]byte) {
	if len(dst) < len(src) {
		panic("chacha20: output smaller than input")
	}
	if uint64(len(src)) > 1<<32*BlockSize {
		panic("chacha20: counter overflow")
	}
	var sub [8]uint32
	var hn [4]uint32
	for i := range hn {
		hn[i] = binary.LittleEndian.Uint32(nonce[4*i:])
	}
	hchacha(&sub, &k.key, &hn, k.rounds)
	var state [16]uint32
	initState(&state, &sub, 0, &[3]uint32{0, binary.LittleEndian.Uint32(nonce[16:]), binary.LittleEndian.Uint32(nonce[20:])})
	clear(sub[:])
	dst = dst[:len(src)]
	n := xorLumps(&state, k.rounds, dst, src)
	if n < len(src) {
		var tail [maxTailLump]byte
		kn := kernels[len(kernels)-1]
		size := kn.blocks * BlockSize
		kn.xor(&state, k.rounds, tail[:size], zeros[:size])
		subtle.XORBytes(dst[n:], src[n:], tail[:size])
		clear(tail[:])
	}
	clear(state[:])
}
