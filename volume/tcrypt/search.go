package tcrypt

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/volume"
)

// search runs the jobs in order and returns the first header that
// verifies; the derivations still running are cancelled at once and
// nothing new starts.
//
// A job starts when the ones running keep fewer cores busy than there are
// (job.cores), or when nothing runs. So the first VeraCrypt derivation has
// every core to itself instead of a fair share beside the unlikely ones,
// while a one-lane derivation (Argon2id) leaves the other cores to the
// next job — unless that is Argon2id too: two of them would share the
// memory bandwidth they are bound by, and need their memory (416 MiB to
// 1 GiB each) at once. The waiting is a blocking receive: no goroutine spins while
// the derivations need the cores, so a busy machine loses nothing to the
// scheduler.
func search(ctx context.Context, jobs []*job, progress func(string)) (*found, error) {
	if len(jobs) == 0 {
		return nil, volume.ErrWrongPassword
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		j   *job
		f   *found
		err error
	}
	results := make(chan result, len(jobs))
	cores := runtime.GOMAXPROCS(0)
	var (
		next, busy, running int
		hogs                int // Argon2 jobs running
		best                *found
		errs                []error
	)
	for {
		for next < len(jobs) && best == nil && ctx.Err() == nil && (running == 0 || busy < cores && !(hogs > 0 && jobs[next].kdf.argon2())) {
			j := jobs[next]
			next++
			busy += j.cores()
			running++
			if j.kdf.argon2() {
				hogs++
			}
			if progress != nil {
				progress(j.String())
			}
			go func() {
				f, err := j.run(ctx)
				results <- result{j, f, err}
			}()
		}
		if running == 0 {
			break
		}
		// Wait for the running jobs to end even after a find: they read
		// the password, which the caller wipes when search returns.
		r := <-results
		running--
		busy -= r.j.cores()
		if r.j.kdf.argon2() {
			hogs--
		}
		switch {
		case r.f != nil && best == nil:
			best = r.f
			cancel()
		case r.err != nil && ctx.Err() == nil:
			errs = append(errs, r.err)
		}
	}
	if best != nil {
		return best, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		// A derivation that could not run (say, Argon2 lacking memory)
		// matters when nothing else verified.
		return nil, fmt.Errorf("%w (also: %v)", volume.ErrWrongPassword, errors.Join(errs...))
	}
	return nil, volume.ErrWrongPassword
}

// run derives the job's key(s) and tries them on its header copies.
func (j *job) run(ctx context.Context) (*found, error) {
	var keys [][]byte
	if len(j.salts) == 1 {
		key, err := kdf.Derive(ctx, j.kdf.params(), j.pass, j.salts[0].salt, j.keyLen)
		if err != nil {
			return nil, err
		}
		keys = [][]byte{key}
	} else {
		salts := make([][]byte, len(j.salts))
		for i, s := range j.salts {
			salts[i] = s.salt
		}
		var err error
		if keys, err = kdf.DeriveMany(ctx, j.kdf.params(), j.pass, salts, j.keyLen); err != nil {
			return nil, err
		}
	}
	defer func() {
		for _, k := range keys {
			clear(k)
		}
	}()
	for i, s := range j.salts {
		for _, c := range s.copies {
			if f := tryKey(ctx, c, j.kdf, keys[i], j.ss); f != nil {
				return f, nil
			}
		}
	}
	return nil, nil
}
