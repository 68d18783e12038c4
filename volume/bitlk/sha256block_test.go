package bitlk

import (
	"crypto/sha256"
	"encoding/binary"
	mrand "math/rand"
	"testing"
)

// TestCompress checks compress against crypto/sha256 on random two-block
// messages of 88 bytes, the stretch's shape.
func TestCompress(t *testing.T) {
	rng := mrand.New(mrand.NewSource(3))
	for n := 0; n < 200; n++ {
		var rec [88]byte
		rng.Read(rec[:])
		var initial [32]byte
		var salt [16]byte
		copy(initial[:], rec[32:64])
		copy(salt[:], rec[64:80])
		s := newChainState(&initial, &salt)
		for i := 0; i < 8; i++ {
			s.last[i] = binary.BigEndian.Uint32(rec[4*i:])
		}
		s.counter = binary.LittleEndian.Uint64(rec[80:])
		copy(s.block1[:8], s.last[:])
		s.setCounter()
		h := sha256IV
		compress(&h, &s.block1)
		compress(&h, &s.block2)
		s.last = h
		if got, want := s.digest(), sha256.Sum256(rec[:]); got != want {
			t.Fatalf("message %x: %x, want %x", rec, got, want)
		}
	}
}
