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
// loops, and that those (one chain and two at once) run the same chains
// as the hash.Hash path
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
			// chain2 on the same chain and a second one.
			u2, acc2 := rnd(64), rnd(64)
			ru2, racc2 := bytes.Clone(u2), bytes.Clone(acc2)
			c.ref.chain(ru2, racc2, n)
			pu, pacc := bytes.Clone(u), bytes.Clone(acc)
			fast.(pairPRF).chain2(pu, pacc, u2, acc2, n)
			if !bytes.Equal(pu, ru) || !bytes.Equal(pacc, racc) || !bytes.Equal(u2, ru2) || !bytes.Equal(acc2, racc2) {
				t.Fatalf("%s pw %x, %d iterations: chain2 differs from chain", c.name, pw, n)
			}
			fast.wipe()
		}
	}
}
