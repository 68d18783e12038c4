// Package kdf derives volume header keys: PBKDF2 (RFC 8018) with any hash
// of the hashes registry as HMAC PRF, Argon2 (subpackage argon2), and the
// TrueCrypt/VeraCrypt rules that turn a PRF name and a PIM into iteration
// counts and Argon2 costs.
package kdf

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"

	"github.com/cryptvol/cryptvol/hashes"
)

// checkEvery is how many iterations run between two looks at the context:
// rare enough to cost nothing, frequent enough (well under a millisecond)
// for a prompt cancel.
const checkEvery = 1024

// parallelThreshold is the iteration count from which the output blocks of
// one derivation are computed on separate goroutines. Below it the
// goroutine start-up is not worth it (and small derivations stay
// allocation-identical, which the tests check).
const parallelThreshold = 4096

// maxParallel limits the goroutines PBKDF2 starts; a variable so tests and
// benchmarks can force the sequential path.
var maxParallel = func() int { return runtime.GOMAXPROCS(0) }

// PBKDF2 derives keyLen bytes from password and salt with PBKDF2-HMAC-h and
// the given iteration count (RFC 8018 section 5.2). It panics if iterations
// or keyLen is below 1, as crypto/pbkdf2 rejects those too.
func PBKDF2(h hashes.Spec, password, salt []byte, iterations, keyLen int) []byte {
	dk, err := PBKDF2Context(context.Background(), h, password, salt, iterations, keyLen)
	if err != nil {
		panic(err)
	}
	return dk
}

// PBKDF2ByName is PBKDF2 with the hash looked up by name in the registry
// (e.g. "SHA-512", "whirlpool", "stribog512").
func PBKDF2ByName(name string, password, salt []byte, iterations, keyLen int) ([]byte, error) {
	h, err := hashes.Lookup(name)
	if err != nil {
		return nil, err
	}
	return PBKDF2Context(context.Background(), h, password, salt, iterations, keyLen)
}

// PBKDF2Context is PBKDF2 that stops early, returning ctx.Err(), once ctx
// is done. Independent output blocks run side by side in SIMD lanes for
// SHA-512 and SHA-256 where the CPU has them (see PBKDF2Path), and on
// separate goroutines when the derivation is long enough to gain from it.
func PBKDF2Context(ctx context.Context, h hashes.Spec, password, salt []byte, iterations, keyLen int) ([]byte, error) {
	dks, err := pbkdf2Salts(ctx, h, password, [][]byte{salt}, iterations, keyLen)
	if err != nil {
		return nil, err
	}
	return dks[0], nil
}

// chain is one PBKDF2 output block to compute: T_index of a salt, into dst.
type chain struct {
	salt  []byte
	index uint32
	dst   []byte
}

// pbkdf2Salts derives keyLen bytes for each salt with the same password
// and iteration count, all output blocks of all salts as one pool of
// independent chains.
func pbkdf2Salts(ctx context.Context, h hashes.Spec, password []byte, salts [][]byte, iterations, keyLen int) ([][]byte, error) {
	if iterations < 1 {
		return nil, fmt.Errorf("kdf: PBKDF2 iteration count %d < 1", iterations)
	}
	if keyLen < 1 {
		return nil, fmt.Errorf("kdf: PBKDF2 key length %d < 1", keyLen)
	}
	if h.New == nil {
		return nil, fmt.Errorf("kdf: PBKDF2 with an empty hash spec")
	}
	p := newPRF(h, password)
	defer p.wipe()
	hLen := p.size()
	blocks := (keyLen + hLen - 1) / hLen
	if uint64(blocks) > 1<<32-1 {
		return nil, fmt.Errorf("kdf: PBKDF2 key length %d too long", keyLen)
	}
	buf := make([]byte, len(salts)*blocks*hLen)
	chains := make([]chain, 0, len(salts)*blocks)
	for s, salt := range salts {
		for i := range blocks {
			off := (s*blocks + i) * hLen
			chains = append(chains, chain{salt: salt, index: uint32(i + 1), dst: buf[off : off+hLen]})
		}
	}
	workers := 1
	if iterations >= parallelThreshold && len(chains) > 1 {
		workers = min(len(chains), maxParallel())
	}
	var err error
	if ks := laneKernels(h); ks != nil {
		err = deriveLanes(ctx, ks, h, p, password, chains, iterations, workers)
	} else {
		err = deriveChains(ctx, p, chains, iterations, workers)
	}
	if err != nil {
		clear(buf)
		return nil, err
	}
	dks := make([][]byte, len(salts))
	for s := range salts {
		dk := buf[s*blocks*hLen : (s+1)*blocks*hLen]
		clear(dk[keyLen:])
		dks[s] = dk[:keyLen:keyLen]
	}
	return dks, nil
}

// deriveChains computes the chains one at a time per goroutine, chain w,
// w+workers, ... on goroutine w.
func deriveChains(ctx context.Context, p prf, chains []chain, iterations, workers int) error {
	if workers <= 1 {
		return deriveBlocks(ctx, p, chains, iterations, 0, 1)
	}
	// Clone before starting anything: clone reads the scratch state
	// that a running worker writes.
	prfs := make([]prf, workers)
	prfs[0] = p
	for w := 1; w < workers; w++ {
		prfs[w] = p.clone()
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w, pw := range prfs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if pw != p {
				defer pw.wipe()
			}
			errs[w] = deriveBlocks(ctx, pw, chains, iterations, w, workers)
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// deriveBlocks computes chains first, first+step, ...: T_i = U_1 xor ...
// xor U_c with U_1 = PRF(salt || INT(i)) and U_j = PRF(U_{j-1}). A
// pairPRF takes them two at a time.
func deriveBlocks(ctx context.Context, p prf, chains []chain, iterations, first, step int) error {
	u := make([]byte, 2*p.size())
	defer clear(u)
	u1, u2 := u[:p.size()], u[p.size():]
	var msg []byte
	defer func() { clear(msg) }()
	done := ctx.Done()
	start := func(ch chain, u []byte) {
		msg = binary.BigEndian.AppendUint32(append(msg[:0], ch.salt...), ch.index)
		p.mac(u, msg)
		copy(ch.dst, u)
	}
	pp, paired := p.(pairPRF)
	for c := first; c < len(chains); c += step {
		ch := chains[c]
		start(ch, u1)
		var other chain
		pair := paired && c+step < len(chains)
		if pair {
			c += step
			other = chains[c]
			start(other, u2)
		}
		for left := iterations - 1; left > 0; {
			n := min(left, checkEvery)
			if pair {
				pp.chain2(u1, ch.dst, u2, other.dst, n)
			} else {
				p.chain(u1, ch.dst, n)
			}
			left -= n
			if done != nil {
				select {
				case <-done:
					return ctx.Err()
				default:
				}
			}
		}
	}
	return nil
}
