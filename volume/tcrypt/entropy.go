package tcrypt

import (
	"crypto/rand"
	"crypto/sha512"
	"encoding/binary"
	"fmt"
	"io"
)

// entropy hands out key material: bytes from the operating system's
// generator, XORed with a SHA-512 counter-mode stream keyed by the user's
// extra random source when one is given (TrueCrypt's --random-source). The
// XOR of an independent stream never weakens the system's randomness, and
// a weak system generator is backed by the user's data.
type entropy struct {
	seed    []byte // SHA-512 of the user's random source, or nil
	counter uint64
}

// newEntropy digests the extra random source (read to its end).
func newEntropy(extra io.Reader) (*entropy, error) {
	e := &entropy{}
	if extra == nil {
		return e, nil
	}
	h := sha512.New()
	n, err := io.Copy(h, extra)
	if err != nil {
		return nil, fmt.Errorf("reading the random source: %w", err)
	}
	if n < 64 {
		return nil, fmt.Errorf("the random source gave only %d bytes; give at least 64", n)
	}
	e.seed = h.Sum(nil)
	return e, nil
}

// fill writes random bytes into p.
func (e *entropy) fill(p []byte) error {
	if _, err := rand.Read(p); err != nil {
		return err
	}
	if e.seed == nil {
		return nil
	}
	var ctr [8]byte
	for off := 0; off < len(p); off += sha512.Size {
		binary.BigEndian.PutUint64(ctr[:], e.counter)
		e.counter++
		h := sha512.New()
		h.Write(e.seed)
		h.Write(ctr[:])
		blk := h.Sum(nil)
		for i := 0; i < len(blk) && off+i < len(p); i++ {
			p[off+i] ^= blk[i]
		}
	}
	return nil
}

func (e *entropy) bytes(n int) ([]byte, error) {
	b := make([]byte, n)
	return b, e.fill(b)
}
