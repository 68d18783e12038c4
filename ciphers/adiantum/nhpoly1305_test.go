package adiantum

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"golang.org/x/crypto/poly1305" //lint:ignore SA1019 a differential oracle, not used for MACs
)

// TestNHPoly1305Vectors checks Linux's testmgr.h NHPoly1305 vectors on
// every NH path this CPU runs.
func TestNHPoly1305Vectors(t *testing.T) {
	vs := readRecords(t, "testdata/nhpoly1305.txt", "digest")
	if len(vs) != 6 {
		t.Fatalf("%d vectors, want testmgr.h's 6", len(vs))
	}
	for _, impl := range nhImpls() {
		withNH(impl, func() {
			for _, v := range vs {
				k := newNHPolyKey(v.fields["key"])
				lo, hi := k.sum(v.fields["message"])
				got := make([]byte, 16)
				binary.LittleEndian.PutUint64(got, lo)
				binary.LittleEndian.PutUint64(got[8:], hi)
				if want := v.fields["digest"]; !bytes.Equal(got, want) {
					t.Errorf("NH %s, %s (%d bytes): got %x, want %x", nhImplName(impl), v.name, len(v.fields["message"]), got, want)
				}
			}
		})
	}
}

// TestNHKernelsMatchGeneric compares every NH kernel with the generic Go
// one on random keys and messages of every length in units, and on the
// words that stress the carries (all ones).
func TestNHKernelsMatchGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	key := make([]byte, nhKeySize)
	msg := make([]byte, nhMessage)
	for iter := 0; iter < 8; iter++ {
		for i := range key {
			key[i] = byte(rng.Uint32())
			if iter == 0 {
				key[i] = 0xff
			}
		}
		for i := range msg {
			msg[i] = byte(rng.Uint32())
			if iter == 0 {
				msg[i] = 0xff
			}
		}
		k := newNHKey(key)
		for n := 0; n <= nhMessage; n += nhUnit {
			var want [4]uint64
			nhGeneric(k, msg[:n], &want)
			for _, impl := range nhImpls() {
				var got [4]uint64
				nhWith(impl, k, msg[:n], &got)
				if got != want {
					t.Fatalf("NH %s, iteration %d, %d bytes: %x, want %x", nhImplName(impl), iter, n, got, want)
				}
			}
		}
	}
}

// TestPoly1305MatchesXCrypto: Poly1305 without the final addition is
// x/crypto's Poly1305 MAC with s = 0, for whole blocks, including the
// values that need the final reduction (h just above p).
func TestPoly1305MatchesXCrypto(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for iter := 0; iter < 500; iter++ {
		var key [32]byte
		for i := 0; i < 16; i++ {
			key[i] = byte(rng.Uint32())
		}
		msg := make([]byte, 16*rng.IntN(40))
		for i := range msg {
			msg[i] = byte(rng.Uint32())
			if iter%4 == 0 {
				msg[i] = 0xff
			}
		}
		if iter%7 == 0 {
			for i := 0; i < 16; i++ {
				key[i] = 0xff // clamps to the largest r
			}
		}
		pk := newPolyKey(key[:16])
		var s polyState
		s.blocks(&pk, msg)
		lo, hi := s.sum()
		got := make([]byte, 16)
		binary.LittleEndian.PutUint64(got, lo)
		binary.LittleEndian.PutUint64(got[8:], hi)
		var want [16]byte
		poly1305.Sum(&want, msg, &key)
		if !bytes.Equal(got, want[:]) {
			t.Fatalf("iteration %d (%d blocks): %x, want %x", iter, len(msg)/16, got, want)
		}
	}
}
