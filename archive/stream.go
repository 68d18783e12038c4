package archive

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
)

// Streams: every record and every index segment is one stream, its
// plaintext cut into chunks of ChunkSize bytes, each sealed on its own with
// a nonce that holds the chunk's number and whether it is the last (the
// STREAM construction of Hoang, Reyhanitabar, Rogaway and Vizár, as age
// uses it), and associated data naming the file and the stream's offset in
// it. So a member can be read from any chunk, chunks cannot be reordered,
// dropped or moved, and a stream cannot be cut short or moved elsewhere.

// ChunkSize is the plaintext size of every chunk but the last of a stream.
const ChunkSize = 64 << 10

// TagSize is the authentication tag appended to each chunk.
const TagSize = 16

// maxChunks bounds the chunk counter to the 56 bits both nonce layouts hold.
const maxChunks = 1 << 56

// streamChunks is the number of chunks of a plaintext of n bytes: at least
// one (an empty stream is one empty chunk, which still authenticates).
func streamChunks(n int64) int64 {
	if n <= 0 {
		return 1
	}
	return (n + ChunkSize - 1) / ChunkSize
}

// StreamLen is the on-disk length of a stream of n plaintext bytes.
func StreamLen(n int64) int64 { return n + TagSize*streamChunks(n) }

// maxStreamPlain keeps StreamLen within int64.
const maxStreamPlain = 1 << 62

// streamCrypt seals or opens the chunks of one stream. It allocates nothing
// per chunk.
type streamCrypt struct {
	aead  cipher.AEAD
	nonce [12]byte
	ad    [24]byte
}

// newStream keys a stream: purpose key k, stream nonce r, in the file fileID
// at byte offset off.
func newStream(c Cipher, k *purposeKey, r *[16]byte, fileID *[16]byte, off int64) (*streamCrypt, error) {
	s := new(streamCrypt)
	return s, s.init(c, k, r, fileID, off)
}

func (s *streamCrypt) init(c Cipher, k *purposeKey, r *[16]byte, fileID *[16]byte, off int64) error {
	a, err := newStreamAEAD(c, &k.key, k.ex, r)
	if err != nil {
		return err
	}
	s.aead = a
	copy(s.ad[:16], fileID[:])
	binary.BigEndian.PutUint64(s.ad[16:], uint64(off))
	return nil
}

// chunkNonce writes the nonce of chunk i: 0^3 || uint64 BE i || last. For
// AES-256-GCM that is the 88-bit counter and the flag byte; for the
// ChaCha20-Poly1305 that XChaCha20-Poly1305 reduces to, it is 0^4 || 56-bit
// counter || flag, which is the same bytes while i < 2^56.
func (s *streamCrypt) chunkNonce(i int64, last bool) []byte {
	binary.BigEndian.PutUint64(s.nonce[3:11], uint64(i))
	s.nonce[11] = 0
	if last {
		s.nonce[11] = 1
	}
	return s.nonce[:]
}

// seal appends the sealed chunk i of plain to dst.
func (s *streamCrypt) seal(dst, plain []byte, i int64, last bool) []byte {
	return s.aead.Seal(dst, s.chunkNonce(i, last), plain, s.ad[:])
}

// open authenticates and decrypts chunk i; dst and ct may be the same
// slice (in place).
func (s *streamCrypt) open(dst, ct []byte, i int64, last bool) ([]byte, error) {
	p, err := s.aead.Open(dst, s.chunkNonce(i, last), ct, s.ad[:])
	if err != nil {
		return nil, fmt.Errorf("chunk %d does not authenticate", i)
	}
	return p, nil
}
