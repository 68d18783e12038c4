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
// is done. Independent output blocks run on separate goroutines when the
// derivation is long enough to gain from it.
func PBKDF2Context(ctx context.Context, h hashes.Spec, password, salt []byte, iterations, keyLen int) ([]byte, error) {
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
	dk := make([]byte, blocks*hLen)
	workers := 1
	if iterations >= parallelThreshold && blocks > 1 {
		workers = min(blocks, maxParallel())
	}
	var err error
	if workers <= 1 {
		err = deriveBlocks(ctx, p, salt, iterations, dk, 1, blocks, 1)
	} else {
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
				errs[w] = deriveBlocks(ctx, pw, salt, iterations, dk, 1+w, blocks, workers)
			}()
		}
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				err = e
				break
			}
		}
	}
	if err != nil {
		clear(dk)
		return nil, err
	}
	clear(dk[keyLen:])
	return dk[:keyLen:keyLen], nil
}

// deriveBlocks computes T_first, T_first+step, ... (1-based block indexes
// up to last) into dk: T_i = U_1 xor ... xor U_c with U_1 = PRF(salt ||
// INT(i)) and U_j = PRF(U_{j-1}).
func deriveBlocks(ctx context.Context, p prf, salt []byte, iterations int, dk []byte, first, last, step int) error {
	hLen := p.size()
	msg := make([]byte, len(salt)+4)
	copy(msg, salt)
	u := make([]byte, hLen)
	defer clear(u)
	done := ctx.Done()
	for i := first; i <= last; i += step {
		binary.BigEndian.PutUint32(msg[len(salt):], uint32(i))
		p.mac(u, msg)
		acc := dk[(i-1)*hLen : i*hLen]
		copy(acc, u)
		for left := iterations - 1; left > 0; {
			n := min(left, checkEvery)
			p.chain(u, acc, n)
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
