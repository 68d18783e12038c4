package luks

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/cryptvol/cryptvol/kdf/argon2"
	"github.com/cryptvol/cryptvol/volume"
)

// attempt is one keyslot to try.
type attempt struct {
	slot int
	what string                                    // for progress: "LUKS2 keyslot 1 (argon2id, 1024 MiB, time cost 4, threads 4)"
	open func(ctx context.Context) ([]byte, error) // volume key, nil if the passphrase is wrong
}

// opened is the keyslot that verified and the volume key it held.
type opened struct {
	slot int
	key  []byte
}

// runAttempts tries the keyslots on all cores, in list order, and stops the
// others as soon as one verifies (an earlier one found at the same time
// wins). Argon2 keyslots that cannot get their memory while others run are
// retried one at a time afterwards, so memory bounds the parallelism too.
// progress, if not nil, is told each keyslot as its derivation starts (a
// keyslot can take seconds: the user sees what is being tried).
func runAttempts(parent context.Context, attempts []attempt, progress func(string)) (*opened, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var (
		mu       sync.Mutex
		best     *opened
		bestIdx  = len(attempts)
		errs     []error
		tried    int // attempts that ran to a verdict
		deferred []int
	)
	run := func(i int, concurrent bool) {
		if progress != nil && ctx.Err() == nil {
			progress(attempts[i].what)
		}
		key, err := attempts[i].open(ctx)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil && key != nil:
			tried++
			if i < bestIdx {
				if best != nil {
					clear(best.key)
				}
				best, bestIdx = &opened{slot: attempts[i].slot, key: key}, i
				cancel()
			} else {
				clear(key)
			}
		case err == nil:
			tried++
		case concurrent && errors.Is(err, argon2.ErrInsufficientMemory):
			deferred = append(deferred, i)
		case ctx.Err() == nil:
			errs = append(errs, fmt.Errorf("keyslot %d: %w", attempts[i].slot, err))
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(attempts))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				run(i, workers > 1)
			}
		}()
	}
feed:
	for i := range attempts {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for _, i := range deferred {
		if best != nil || ctx.Err() != nil {
			break
		}
		run(i, false)
	}
	if best != nil {
		return best, nil
	}
	if err := parent.Err(); err != nil {
		return nil, err
	}
	if len(errs) > 0 && tried == 0 {
		// Nothing could even be tried: say why rather than blame the
		// passphrase.
		return nil, errors.Join(errs...)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: no keyslot opened with this passphrase (also: %v)", volume.ErrWrongPassword, errors.Join(errs...))
	}
	return nil, fmt.Errorf("%w: no keyslot opened with this passphrase", volume.ErrWrongPassword)
}

// luks1Attempts lists the enabled keyslots (or only the one asked for).
func luks1Attempts(dev volume.Device, h *luks1Header, pass []byte, only *int) ([]attempt, error) {
	var out []attempt
	for i := range h.Slots {
		if only != nil && *only != i {
			continue
		}
		if h.Slots[i].Active != luks1SlotEnabled {
			continue
		}
		i := i
		what := fmt.Sprintf("LUKS1 keyslot %d (PBKDF2-%s, %d iterations)", i, h.HashSpec, h.Slots[i].Iterations)
		out = append(out, attempt{slot: i, what: what, open: func(ctx context.Context) ([]byte, error) {
			return openLUKS1Slot(ctx, dev, h, i, pass)
		}})
	}
	if only != nil && (*only < 0 || *only >= luks1NumKeys) {
		return nil, fmt.Errorf("%w: keyslot %d does not exist (LUKS1 has 0 to 7)", volume.ErrWrongPassword, *only)
	}
	if len(out) == 0 {
		if only != nil {
			return nil, fmt.Errorf("%w: keyslot %d is not active", volume.ErrWrongPassword, *only)
		}
		return nil, fmt.Errorf("%w: the volume has no active keyslot", volume.ErrWrongPassword)
	}
	return out, nil
}

// keyslotPriority is LUKS2's "priority": 0 ignore, 1 normal, 2 prefer.
func keyslotPriority(k jsonKeyslot) int64 {
	if k.Priority == nil {
		return 1
	}
	return *k.Priority
}

// luks2Attempts lists the keyslots that hold the key of digest (the data
// segment's), preferred ones first and "ignore" ones only when asked for
// by number. With digest "" every luks2 keyslot is a candidate.
func luks2Attempts(dev volume.Device, h *luks2Header, digest string, pass []byte, only *int) ([]attempt, error) {
	var preferred, normal []attempt
	for _, id := range sortedIDs(h.meta.doc.Keyslots) {
		k := h.meta.doc.Keyslots[id]
		n := atoiID(id)
		if only != nil && *only != n {
			continue
		}
		dg, bound := h.meta.digestOf(id)
		if digest != "" && (!bound || dg != digest) {
			if only != nil {
				return nil, fmt.Errorf("%w: keyslot %d holds an unbound key, not the volume key of the data segment", volume.ErrUnsupported, n)
			}
			continue
		}
		if k.Type != "luks2" {
			if only != nil {
				return nil, fmt.Errorf("%w: keyslot %d has type %q", volume.ErrUnsupported, n, k.Type)
			}
			continue
		}
		a := attempt{slot: n, what: luks2SlotWhat(n, k.KDF), open: func(ctx context.Context) ([]byte, error) {
			return openLUKS2Slot(ctx, dev, h, id, pass)
		}}
		switch p := keyslotPriority(k); {
		case p >= 2:
			preferred = append(preferred, a)
		case p == 1 || only != nil:
			normal = append(normal, a)
		}
	}
	out := append(preferred, normal...)
	if len(out) == 0 {
		if only != nil {
			return nil, fmt.Errorf("%w: keyslot %d is not active", volume.ErrWrongPassword, *only)
		}
		return nil, fmt.Errorf("%w: the volume has no usable keyslot", volume.ErrWrongPassword)
	}
	return out, nil
}

func atoiID(id string) int {
	n := 0
	for _, c := range []byte(id) {
		n = n*10 + int(c-'0')
	}
	return n
}

// luks2SlotWhat names a keyslot and its KDF's cost for progress lines.
func luks2SlotWhat(n int, k *jsonKDF) string {
	switch {
	case k == nil:
		return fmt.Sprintf("LUKS2 keyslot %d", n)
	case k.Type == "pbkdf2":
		return fmt.Sprintf("LUKS2 keyslot %d (PBKDF2-%s, %d iterations)", n, k.Hash, k.Iterations)
	default:
		return fmt.Sprintf("LUKS2 keyslot %d (%s, %d MiB, time cost %d, threads %d)", n, k.Type, k.Memory>>10, k.Time, k.CPUs)
	}
}
