package volume

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
)

// Extent is a byte range of a device.
type Extent struct{ Offset, Length int64 }

// HeaderSnapshot remembers what some header bytes of a device held when
// they were read, so that a writer can refuse to go on when another
// program (or machine), unseen by the lock, has rewritten them since. It
// keeps a digest, not the bytes.
type HeaderSnapshot struct {
	ext []Extent
	sum [sha256.Size]byte
}

// SnapshotHeader reads the extents of dev (the parts beyond its end count
// as empty) and remembers them.
func SnapshotHeader(dev Device, ext ...Extent) (*HeaderSnapshot, error) {
	s := &HeaderSnapshot{ext: append([]Extent(nil), ext...)}
	sum, err := s.digest(dev)
	if err != nil {
		return nil, err
	}
	s.sum = sum
	return s, nil
}

// Check reads the extents again and returns an error wrapping
// ErrHeaderChanged if they differ from the snapshot. A nil snapshot checks
// nothing.
func (s *HeaderSnapshot) Check(dev Device) error {
	if s == nil {
		return nil
	}
	sum, err := s.digest(dev)
	if err != nil {
		return fmt.Errorf("re-reading the volume header: %w", err)
	}
	if sum != s.sum {
		return ErrHeaderChanged
	}
	return nil
}

func (s *HeaderSnapshot) digest(dev Device) ([sha256.Size]byte, error) {
	h := sha256.New()
	size := dev.Size()
	for _, e := range s.ext {
		n := min(e.Length, size-e.Offset)
		if e.Offset < 0 || n <= 0 {
			fmt.Fprintf(h, "none@%d;", e.Offset)
			continue
		}
		buf := make([]byte, n)
		if k, err := dev.ReadAt(buf, e.Offset); k < len(buf) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return [sha256.Size]byte{}, err
		}
		fmt.Fprintf(h, "%d@%d;", n, e.Offset)
		h.Write(buf)
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out, nil
}
