package bitlk

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/cryptvol/cryptvol/volume"
)

// Keys are layered: a protector (password, recovery password, startup
// key, clear key) decrypts its copy of the volume master key (VMK); the
// VMK decrypts the full volume encryption key (FVEK) and the signed digest
// of the metadata. Every step is AES-CCM, so a wrong key is told from a
// right one by the tag, never by guessing.

// credentials is what the caller's volume.Credentials offer BitLocker.
type credentials struct {
	passwords [][]byte // user passwords (also from key files that are not .BEK files)
	recovery  []*[16]byte
	beks      []*BEK
}

func (c *credentials) wipe() {
	for _, p := range c.passwords {
		clear(p)
	}
	for _, k := range c.recovery {
		clear(k[:])
	}
	for _, k := range c.beks {
		k.Wipe()
	}
}

func (c *credentials) empty() bool {
	return len(c.passwords) == 0 && len(c.recovery) == 0 && len(c.beks) == 0
}

// gather sorts the credentials: a recovery password may come as the
// password (cryptsetup's way) or on its own; a key file is a startup key
// when it parses as one, else its content is a password (cryptsetup's
// --key-file), and so is the startup-key flag's file only if it is a .BEK.
func gather(vc volume.Credentials) (*credentials, error) {
	c := &credentials{}
	addPassword := func(p []byte) {
		if len(p) == 0 {
			return
		}
		c.passwords = append(c.passwords, append([]byte(nil), p...))
		if looksLikeRecoveryPassword(p) {
			if k, err := ParseRecoveryPassword(string(p)); err == nil {
				c.recovery = append(c.recovery, k)
			}
		}
	}
	addPassword(vc.Password)
	if len(vc.RecoveryPassword) > 0 {
		k, err := ParseRecoveryPassword(string(vc.RecoveryPassword))
		if err != nil {
			c.wipe()
			return nil, fmt.Errorf("%w: %v", volume.ErrWrongPassword, err)
		}
		c.recovery = append(c.recovery, k)
	}
	if vc.StartupKey != "" {
		b, err := os.ReadFile(vc.StartupKey)
		if err != nil {
			c.wipe()
			return nil, fmt.Errorf("startup key: %w", err)
		}
		k, err := ParseBEK(b)
		clear(b)
		if err != nil {
			c.wipe()
			return nil, fmt.Errorf("%w: %s: %v", volume.ErrWrongPassword, vc.StartupKey, err)
		}
		c.beks = append(c.beks, k)
	}
	for _, f := range vc.Keyfiles {
		b, err := os.ReadFile(f)
		if err != nil {
			c.wipe()
			return nil, fmt.Errorf("key file: %w", err)
		}
		if k, err := ParseBEK(b); err == nil {
			c.beks = append(c.beks, k)
		} else {
			addPassword(bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r")))
		}
		clear(b)
	}
	return c, nil
}

// opened is the outcome of unlocking: the VMK and the protector that gave it.
type opened struct {
	vmk   []byte
	index int // into Metadata.VMKs
}

// unlockVMK finds a protector the credentials open and returns its VMK.
func unlockVMK(ctx context.Context, m *Metadata, c *credentials) (*opened, error) {
	// Clear keys and startup keys cost nothing: try them first.
	for i := range m.VMKs {
		v := &m.VMKs[i]
		if v.Protection == ClearKey && v.clearKey != nil && v.enc != nil {
			if vmk, err := decryptVMK(v.clearKey, v); err == nil {
				return &opened{vmk: vmk, index: i}, nil
			}
		}
	}
	var bekMismatch []string
	for _, k := range c.beks {
		if k.hasVolume && k.Volume != m.GUID {
			bekMismatch = append(bekMismatch, fmt.Sprintf("the startup key %s belongs to volume %s, not %s", k.ID, k.Volume, m.GUID))
			continue
		}
		found := false
		for i := range m.VMKs {
			v := &m.VMKs[i]
			if v.Protection != StartupKey || v.GUID != k.ID || v.enc == nil {
				continue
			}
			found = true
			if vmk, err := decryptVMK(k.key, v); err == nil {
				return &opened{vmk: vmk, index: i}, nil
			}
		}
		if !found {
			bekMismatch = append(bekMismatch, fmt.Sprintf("the startup key %s matches no startup-key protector of this volume", k.ID))
		}
	}
	var jobs []stretchJob
	for i := range m.VMKs {
		v := &m.VMKs[i]
		if !v.hasSalt || v.enc == nil {
			continue
		}
		switch v.Protection {
		case Password:
			for _, p := range c.passwords {
				jobs = append(jobs, stretchJob{vmk: i, initial: passwordInitial(p)})
			}
		case RecoveryPassword:
			for _, k := range c.recovery {
				jobs = append(jobs, stretchJob{vmk: i, initial: recoveryKeyInitial(k)})
			}
		}
	}
	o, err := runStretchJobs(ctx, m, jobs)
	if o != nil || err != nil {
		return o, err
	}
	return nil, noProtectorError(m, c, bekMismatch)
}

// stretchJob is one protector tried with one secret.
type stretchJob struct {
	vmk     int
	initial [32]byte
}

// runStretchJobs runs the key stretches at once, up to one per core: they
// are independent serial chains, so a password and a recovery-password
// attempt cost the time of one where two cores are free. The first
// protector that opens wins and stops the others.
func runStretchJobs(parent context.Context, m *Metadata, jobs []stretchJob) (*opened, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var (
		mu     sync.Mutex
		result *opened
		wg     sync.WaitGroup
		sem    = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	)
	for i := range jobs {
		j := &jobs[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer clear(j.initial[:])
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				return
			}
			v := &m.VMKs[j.vmk]
			key, err := stretch(ctx, &j.initial, &v.Salt)
			if err != nil {
				return
			}
			vmk, err := decryptVMK(key[:], v)
			clear(key[:])
			if err != nil {
				return
			}
			mu.Lock()
			if result == nil {
				result = &opened{vmk: vmk, index: j.vmk}
				cancel()
			} else {
				clear(vmk)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if result == nil && parent.Err() != nil {
		return nil, parent.Err()
	}
	return result, nil
}

// decryptVMK decrypts a protector's VMK with the protector's key.
func decryptVMK(key []byte, v *VMK) ([]byte, error) {
	plain, err := openKey(key, v.enc)
	if err != nil {
		return nil, err
	}
	k, err := keyData(plain)
	if err != nil {
		clear(plain)
		return nil, fmt.Errorf("VMK %s: %w", v.GUID, err)
	}
	if len(k) != 32 {
		clear(plain)
		return nil, damaged("VMK %s holds a %d-byte key, not 32", v.GUID, len(k))
	}
	out := append([]byte(nil), k...)
	clear(plain)
	return out, nil
}

// keyData returns the key in a decrypted key container: its size (which
// must be the container's), a version, the method, then the key.
func keyData(b []byte) ([]byte, error) {
	if len(b) < 12 || int(binary.LittleEndian.Uint32(b)) != len(b) {
		return nil, damaged("a decrypted key container of %d bytes says it has %d", len(b), binary.LittleEndian.Uint32(b))
	}
	return b[12:], nil
}

// validate checks the metadata against the digest signed with the VMK:
// the CRC-32 only catches accidents, this catches tampering.
func validate(m *Metadata, vmk []byte) error {
	d, err := openKey(vmk, m.validation)
	if err != nil {
		return damaged("the metadata validation does not authenticate with the volume master key")
	}
	defer clear(d)
	le := binary.LittleEndian
	if len(d) < 12+32 || le.Uint16(d[2:]) != 0 || le.Uint16(d[4:]) != 1 {
		return damaged("the metadata validation holds no digest")
	}
	if t := le.Uint16(d[8:]); t != 0x2005 {
		return unsupported("metadata validated with an unknown digest type 0x%04x", t)
	}
	if subtle.ConstantTimeCompare(d[12:44], m.blockDigest[:]) != 1 {
		return damaged("the FVE metadata does not match the digest signed with its key: it was damaged or tampered with")
	}
	return nil
}

// decryptFVEK decrypts the volume's data key with the VMK.
func decryptFVEK(m *Metadata, vmk []byte) ([]byte, error) {
	plain, err := openKey(vmk, m.fvek)
	if err != nil {
		return nil, damaged("the FVEK does not authenticate with the volume master key")
	}
	k, err := keyData(plain)
	if err != nil {
		clear(plain)
		return nil, err
	}
	out := append([]byte(nil), k...)
	clear(plain)
	return out, nil
}

// noProtectorError explains why nothing opened: what protectors the volume
// has, which of them cryptvol can use, and what was given.
func noProtectorError(m *Metadata, c *credentials, bekMismatch []string) error {
	var usable, other []string
	seen := map[Protection]bool{}
	for _, v := range m.VMKs {
		if seen[v.Protection] {
			continue
		}
		seen[v.Protection] = true
		switch v.Protection {
		case Password, RecoveryPassword, StartupKey, ClearKey:
			usable = append(usable, v.Protection.String())
		default:
			other = append(other, v.Protection.String())
		}
	}
	var s strings.Builder
	if c.empty() {
		s.WriteString("no password, recovery password or startup key given")
	} else {
		s.WriteString("no protector opened with the credentials given")
	}
	if len(bekMismatch) > 0 {
		s.WriteString(" (" + strings.Join(bekMismatch, "; ") + ")")
	}
	if len(usable) > 0 {
		s.WriteString("; this volume opens with: " + strings.Join(usable, ", "))
	} else {
		s.WriteString("; this volume has no protector cryptvol can use")
	}
	if len(other) > 0 {
		s.WriteString(" (not usable here: " + strings.Join(other, ", ") + ")")
	}
	return fmt.Errorf("%w: BitLocker: %s", volume.ErrWrongPassword, s.String())
}
