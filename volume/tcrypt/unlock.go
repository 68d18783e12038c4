package tcrypt

import (
	"context"
	"errors"
	"fmt"

	"github.com/cryptvol/cryptvol/volume"
)

// location is where a header copy sits and what it is.
type location struct {
	Offset int64 // absolute byte offset in the device
	Backup bool
	Hidden bool
	System bool
	// Legacy marks the hidden header of TrueCrypt 4.x/5.x near the end of
	// the file: only TrueCrypt's KDFs ever wrote one there.
	Legacy bool
}

// String names the copy in progress messages.
func (l location) String() string {
	s := "normal header"
	switch {
	case l.System:
		s = "system header"
	case l.Hidden:
		s = "hidden header"
	}
	if l.Backup {
		s = "backup " + s
	}
	return s
}

// headerLocations lists the header copies to try. Without a hint the
// hidden volume's header is tried beside the outer one, as VeraCrypt does
// (a password that opens the hidden header opens the hidden volume);
// Hidden skips the outer header, and a search for the outer volume that
// must protect its hidden one (ProtectHidden) skips the hidden header.
func headerLocations(size int64, o volume.Options) []location {
	if o.System {
		return []location{{Offset: offSystem, System: true}}
	}
	var locs []location
	if !o.Hidden {
		locs = append(locs, location{Offset: offNormal})
	}
	if !o.Hidden && o.ProtectHidden != nil {
		// Outer volume only; its backup copy below.
	} else {
		if size >= offHidden+headerSize {
			locs = append(locs, location{Offset: offHidden, Hidden: true})
		}
		if legacy := size + offHiddenLegacy; legacy >= headerSize && legacy != offHidden {
			locs = append(locs, location{Offset: legacy, Hidden: true, Legacy: true})
		}
	}
	if !o.Hidden && size+offBackupNormal >= headerGroupSize {
		locs = append(locs, location{Offset: size + offBackupNormal, Backup: true})
	}
	if (o.Hidden || o.ProtectHidden == nil) && size+offBackupHidden > offHidden {
		locs = append(locs, location{Offset: size + offBackupHidden, Hidden: true, Backup: true})
	}
	return locs
}

// found is a header that decrypted and verified.
type found struct {
	loc    location
	kdf    kdfCandidate
	scheme scheme
	hdr    *header
	salt   [saltSize]byte
}

// headerCopy is one header location as read from the device.
type headerCopy struct {
	loc location
	raw []byte // the 512 bytes: salt, then the encrypted header
}

// unlockHeader searches the header copies at locs for one that the
// credentials decrypt, trying the likely key derivations first (see plan),
// and returns the first that verifies; everything else is cancelled.
func unlockHeader(ctx context.Context, dev volume.Device, creds volume.Credentials, o volume.Options, locs []location) (*found, error) {
	prf := ""
	if o.Hash != "" {
		if prf = canonicalPRF(o.Hash); prf == "" {
			return nil, volume.InvalidOptionf("unknown hash %q (want SHA-512, Whirlpool, SHA-256, BLAKE2s-256, Streebog, RIPEMD-160, SHA-1 or argon2id)", o.Hash)
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
	defer func() {
		clear(passVera)
		clear(passTrue)
	}()
	var usable []kdfCandidate
	for _, k := range kdfs {
		if (k.VeraCrypt && errVera == nil) || (!k.VeraCrypt && errTrue == nil) {
			usable = append(usable, k)
		}
	}

	var copies []*headerCopy
	for _, loc := range locs {
		raw := make([]byte, headerSize)
		if n, _ := dev.ReadAt(raw, loc.Offset); n < headerSize {
			continue // the file is too small for this copy
		}
		copies = append(copies, &headerCopy{loc: loc, raw: raw})
	}
	if len(copies) == 0 {
		return nil, fmt.Errorf("%w: the file is too small to hold a volume header", volume.ErrWrongPassword)
	}
	pass := func(k kdfCandidate) []byte {
		if k.VeraCrypt {
			return passVera
		}
		return passTrue
	}
	primary, backup, err := plan(usable, copies, pass, prf != "", o.Encryption)
	if err != nil {
		return nil, err
	}
	f, err := search(ctx, primary, o.Progress)
	if f != nil || !errors.Is(err, volume.ErrWrongPassword) {
		return f, err
	}
	if len(backup.jobs) == 0 {
		return nil, err
	}
	f, berr := search(ctx, backup.jobs, o.Progress)
	if f != nil || !errors.Is(berr, volume.ErrWrongPassword) {
		return f, berr
	}
	if backup.partial {
		return nil, fmt.Errorf("%w (the backup headers were tried with TrueCrypt's KDFs and VeraCrypt's %s only: if the primary header is damaged, name the PRF with --hash)", berr, backup.vera)
	}
	return nil, berr
}

// tryKey tries every scheme on one header copy with a derived header key.
func tryKey(ctx context.Context, c *headerCopy, k kdfCandidate, key []byte, ss []scheme) *found {
	buf := make([]byte, encryptedSize)
	defer clear(buf)
	for _, s := range ss {
		if ctx.Err() != nil {
			return nil
		}
		copy(buf, c.raw[saltSize:])
		if err := s.decryptHeader(buf, key); err != nil {
			continue
		}
		h, ok := parseHeader(buf)
		if !ok {
			continue
		}
		// A VeraCrypt header only comes from VeraCrypt's KDFs and a
		// TrueCrypt one from TrueCrypt's.
		if (h.Magic == "VERA") != k.VeraCrypt {
			continue
		}
		f := &found{loc: c.loc, kdf: k, scheme: s, hdr: h}
		copy(f.salt[:], c.raw[:saltSize])
		return f
	}
	return nil
}
