package kdf

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/hashes/streebog"
	"github.com/cryptvol/cryptvol/hashes/whirlpool"
)

// TestWordPRFs checks that Whirlpool and Streebog-512 take the word-level
// loops, and that those run the same chains as the hash.Hash path
// (valuePRF) for random passwords (shorter and longer than a block),
// starting blocks and iteration counts; TestPBKDF2Vectors and
// TestPBKDF2AgainstXCrypto check them through PBKDF2 too.
func TestWordPRFs(t *testing.T) {
	if _, ok := newPRF(hashes.MustLookup(hashes.Whirlpool), nil).(*whirlpoolPRF); !ok {
		t.Error("Whirlpool does not take the word-level path")
	}
	if _, ok := newPRF(hashes.MustLookup(hashes.Streebog), nil).(*streebogPRF); !ok {
		t.Error("Streebog does not take the word-level path")
	}
	r := rand.New(rand.NewPCG(5, 6))
	rnd := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	for trial := range 40 {
		pw := rnd(r.IntN(150))
		u, acc := rnd(64), rnd(64)
		n := 1 + r.IntN(20)
		for _, c := range []struct {
			name      string
			fast, ref prf
		}{
			{"Whirlpool", newWhirlpoolPRF(pw), newValuePRF[whirlpool.Digest](func() *whirlpool.Digest { return whirlpool.New() }, pw)},
			{"Streebog", newStreebogPRF(pw), newValuePRF[streebog.Digest](func() *streebog.Digest { return streebog.New() }, pw)},
		} {
			fu, facc := bytes.Clone(u), bytes.Clone(acc)
			ru, racc := bytes.Clone(u), bytes.Clone(acc)
			fast := c.fast
			if trial%2 == 1 {
				fast = fast.clone()
			}
			fast.chain(fu, facc, n)
			c.ref.chain(ru, racc, n)
			if !bytes.Equal(fu, ru) || !bytes.Equal(facc, racc) {
				t.Fatalf("%s pw %x, %d iterations: u %x acc %x, want u %x acc %x", c.name, pw, n, fu, facc, ru, racc)
			}
			fast.wipe()
		}
	}
}
