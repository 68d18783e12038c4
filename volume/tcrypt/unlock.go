package tcrypt

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/cryptvol/cryptvol/volume"
)

// location is where a header copy sits and what it is.
type location struct {
	Offset int64 // absolute byte offset in the device
	Backup bool
	Hidden bool
	System bool
}

// headerLocations lists the header copies to try, primary copies first.
func headerLocations(size int64, o volume.Options) []location {
	switch {
	case o.System:
		return []location{{Offset: offSystem, System: true}}
	case o.Hidden:
		var locs []location
		if size >= offHidden+headerSize {
			locs = append(locs, location{Offset: offHidden, Hidden: true})
		}
		if legacy := size + offHiddenLegacy; legacy >= headerSize {
			locs = append(locs, location{Offset: legacy, Hidden: true})
		}
		if backup := size + offBackupHidden; backup > offHidden {
			locs = append(locs, location{Offset: backup, Hidden: true, Backup: true})
		}
		return locs
	default:
		locs := []location{{Offset: offNormal}}
		if size+offBackupNormal >= headerGroupSize {
			locs = append(locs, location{Offset: size + offBackupNormal, Backup: true})
		}
		return locs
	}
}

// found is a header that decrypted and verified.
type found struct {
	loc    location
	kdf    kdfCandidate
	scheme scheme
	hdr    *header
	salt   [saltSize]byte
}

// attempt is one key derivation to run: a KDF over one header copy's salt.
type attempt struct {
	loc  location
	kdf  kdfCandidate
	raw  []byte // the 512-byte header as read
	pass []byte // KDF input (password or keyfile pool)
}

// unlockHeader tries every KDF on every header copy, in parallel, and
// returns the first header that verifies; the others are cancelled.
func unlockHeader(ctx context.Context, dev volume.Device, creds volume.Credentials, o volume.Options, locs []location) (*found, error) {
	prf := ""
	if o.Hash != "" {
		if prf = canonicalPRF(o.Hash); prf == "" {
			return nil, fmt.Errorf("unknown hash %q (want SHA-512, Whirlpool, SHA-256, BLAKE2s-256, Streebog, RIPEMD-160, SHA-1 or argon2id)", o.Hash)
		}
	}
	wantVera, wantTrue := true, true
	switch o.Type {
	case "veracrypt":
		wantTrue = false
	case "truecrypt":
		wantVera = false
	}
	kdfs := selectKDFs(prf, wantVera, wantTrue, o.System, creds.PIM)
	if len(kdfs) == 0 {
		return nil, fmt.Errorf("%w: no key derivation matches --hash %s with these options", volume.ErrWrongPassword, o.Hash)
	}
	// Validate the cipher hint before any slow work.
	if _, err := schemes(o.Encryption, true); err != nil {
		return nil, err
	}
	passVera, errVera := passwordInput(creds.Password, creds.Keyfiles, true)
	passTrue, errTrue := passwordInput(creds.Password, creds.Keyfiles, false)
	if errVera != nil && errTrue != nil {
		return nil, errVera
	}

	var attempts []attempt
	for _, loc := range locs {
		raw := make([]byte, headerSize)
		if n, _ := dev.ReadAt(raw, loc.Offset); n < headerSize {
			continue // the file is too small for this copy
		}
		for _, k := range kdfs {
			pass := passVera
			if !k.VeraCrypt {
				pass = passTrue
			}
			if (k.VeraCrypt && errVera != nil) || (!k.VeraCrypt && errTrue != nil) {
				continue
			}
			attempts = append(attempts, attempt{loc: loc, kdf: k, raw: raw, pass: pass})
		}
	}
	if len(attempts) == 0 {
		return nil, fmt.Errorf("%w: the file is too small to hold a volume header", volume.ErrWrongPassword)
	}
	defer func() {
		clear(passVera)
		clear(passTrue)
	}()
	// Primary copies first, on all cores; the backup copies only if no
	// primary verified, so a correct --hash costs one derivation with every
	// core on it, and a damaged primary header costs a second round.
	var primary, backup []attempt
	for _, a := range attempts {
		if a.loc.Backup {
			backup = append(backup, a)
		} else {
			primary = append(primary, a)
		}
	}
	f, err := runAttempts(ctx, primary, o.Encryption)
	if f != nil || len(backup) == 0 || !errors.Is(err, volume.ErrWrongPassword) {
		return f, err
	}
	return runAttempts(ctx, backup, o.Encryption)
}

// runAttempts derives header keys on all cores, in list order, and returns
// the first attempt that verifies; everything still running is cancelled
// at once and nothing new starts.
func runAttempts(parent context.Context, attempts []attempt, encryption string) (*found, error) {
	ctxs := make([]context.Context, len(attempts))
	cancels := make([]context.CancelFunc, len(attempts))
	for i := range attempts {
		ctxs[i], cancels[i] = context.WithCancel(parent)
	}
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	var (
		mu      sync.Mutex
		best    *found
		bestIdx = len(attempts)
		errs    []error
		wg      sync.WaitGroup
	)
	next := make(chan int)
	workers := min(runtime.GOMAXPROCS(0), len(attempts))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f, err := tryAttempt(ctxs[i], &attempts[i], encryption)
				mu.Lock()
				switch {
				case f != nil && i < bestIdx:
					best, bestIdx = f, i
					for j := range attempts {
						cancels[j]()
					}
				case err != nil && ctxs[i].Err() == nil:
					errs = append(errs, err)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range attempts {
		mu.Lock()
		stop := best != nil
		mu.Unlock()
		if stop || parent.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if best != nil {
		return best, nil
	}
	if err := parent.Err(); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		// A derivation that could not run (say, Argon2 lacking memory)
		// matters when nothing else verified.
		return nil, fmt.Errorf("%w (also: %v)", volume.ErrWrongPassword, errors.Join(errs...))
	}
	return nil, volume.ErrWrongPassword
}

// tryAttempt derives one header key and tries every scheme on the header.
func tryAttempt(ctx context.Context, a *attempt, encryption string) (*found, error) {
	key, err := deriveHeaderKey(ctx, a.kdf, a.pass, a.raw[:saltSize])
	if err != nil {
		return nil, err
	}
	defer clear(key)
	ss, err := schemes(encryption, !a.kdf.VeraCrypt)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, encryptedSize)
	defer clear(buf)
	for _, s := range ss {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		copy(buf, a.raw[saltSize:])
		if err := s.decryptHeader(buf, key); err != nil {
			continue
		}
		h, ok := parseHeader(buf)
		if !ok {
			continue
		}
		// A VeraCrypt header only comes from VeraCrypt's KDFs and a
		// TrueCrypt one from TrueCrypt's.
		if (h.Magic == "VERA") != a.kdf.VeraCrypt {
			continue
		}
		f := &found{loc: a.loc, kdf: a.kdf, scheme: s, hdr: h}
		copy(f.salt[:], a.raw[:saltSize])
		return f, nil
	}
	return nil, nil
}
