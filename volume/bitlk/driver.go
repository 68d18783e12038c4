// Package bitlk is the BitLocker volume driver (cryptsetup's BITLK):
// BitLocker volumes of Windows 7 and later and BitLocker To Go drives,
// opened with a password, a 48-digit recovery password, a startup key
// (.BEK file) or, when Windows left one, the clear key; AES-XTS, AES-CBC
// and AES-CBC with the Elephant diffuser, 128 and 256 bits, 512- and
// 4096-byte sectors.
//
// The volume is presented as cryptsetup presents it through dm-crypt: the
// original first sectors in their place, the metadata areas as zeros,
// the rest decrypted in place (see layout.go). It is writable: a write
// is encrypted where the read came from, with the same IVs, so Windows
// reads it back; the metadata areas take only zeros (volume.ErrReserved),
// and the metadata itself is never rewritten. Volumes in the middle of a
// conversion (partially encrypted or decrypted) and encrypt-on-write
// ("used space only") volumes hold plaintext and ciphertext side by side
// and are refused, as cryptsetup refuses them. Windows Vista's format is
// not supported.
package bitlk

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/cryptvol/cryptvol/sector"
	"github.com/cryptvol/cryptvol/volume"
)

func init() { volume.Register(driver{}) }

type driver struct{}

func (driver) Name() string { return "bitlk" }

// HasMagic: every BitLocker volume starts with its signature, so
// auto-detection never tries BitLocker by password on other files.
func (driver) HasMagic() bool { return true }

func (driver) Handles(t string) bool {
	switch t {
	case "", "bitlk", "bitlocker":
		return true
	}
	return false
}

// Detect recognises the BitLocker boot sector.
func (driver) Detect(head []byte) bool { return IsBitLocker(head) }

// Keyless reports whether the volume has a clear-key protector, which
// opens it with no credentials.
func (driver) Keyless(hdr volume.Device) bool {
	m, err := ReadMetadata(hdr)
	if err != nil {
		return false
	}
	for _, v := range m.VMKs {
		if v.Protection == ClearKey && v.clearKey != nil {
			return true
		}
	}
	return false
}

// checkState refuses what cannot be read as one decrypted volume.
func (m *Metadata) checkState() error {
	switch {
	case m.EOW:
		return unsupported("this is an encrypt-on-write (\"used space only\") volume, whose never-written sectors are not encrypted: cryptvol, like cryptsetup, cannot open it")
	case m.UnknownType:
		return unsupported("unknown BitLocker volume type")
	case m.CurrentState != stateNormal || m.NextState != stateNormal:
		return unsupported("the volume is partially encrypted or decrypted (conversion state %d, next %d): it holds plaintext and ciphertext side by side, which cryptvol, like cryptsetup, does not open; let Windows finish the conversion first",
			m.CurrentState, m.NextState)
	}
	return nil
}

func (driver) Unlock(ctx context.Context, r *volume.Request) (*volume.Unlocked, error) {
	if r.Header != nil && r.Header != r.Dev {
		return nil, unsupported("BitLocker keeps its metadata on the volume: a detached header does not apply")
	}
	m, err := ReadMetadata(r.Dev)
	if err != nil {
		return nil, err
	}
	if err := m.checkState(); err != nil {
		return nil, err
	}
	c, err := gather(r.Creds)
	if err != nil {
		return nil, err
	}
	defer c.wipe()
	o, err := unlockVMK(ctx, m, c)
	if err != nil {
		return nil, err
	}
	defer clear(o.vmk)
	if err := validate(m, o.vmk); err != nil {
		return nil, err
	}
	fvek, err := decryptFVEK(m, o.vmk)
	if err != nil {
		return nil, err
	}
	defer clear(fvek)
	mode, vk, err := newMode(m.Method, fvek, m.SectorSize)
	if err != nil {
		return nil, err
	}
	ss := int64(m.SectorSize)
	size := r.Dev.Size() / ss * ss
	if uint64(size) != m.VolumeSize && r.Opts.Warn != nil {
		r.Opts.Warn(fmt.Sprintf("the BitLocker volume size %d does not match the size of the device, %d: using the device's, as cryptsetup does", m.VolumeSize, size))
	}
	segs, err := m.segments(size)
	if err != nil {
		clear(vk)
		return nil, err
	}
	return &volume.Unlocked{
		Mode:      mode,
		DataSize:  size,
		Segments:  segs,
		Info:      m.info(o.index, size),
		MasterKey: vk,
		State:     modeState(m.Method, fvek, m.SectorSize),
	}, nil
}

// modeState describes the data area's mode for a later reopen without the
// credentials (volume.Reopener): the method's number and the FVEK key
// data newMode keys it with.
func modeState(method Method, fvek []byte, sectorSize int) *volume.ModeState {
	return &volume.ModeState{
		Spec:       fmt.Sprintf("%#04x", uint16(method)),
		SectorSize: sectorSize,
		Key:        bytes.Clone(fvek[:min(len(fvek), 64)]),
	}
}

// ReopenMode rebuilds the data area's mode from the State of an unlocked
// volume (volume.Reopener).
func (driver) ReopenMode(st volume.ModeState) (sector.Mode, error) {
	n, err := strconv.ParseUint(st.Spec, 0, 16)
	if err != nil {
		return nil, unsupported("encryption method %q", st.Spec)
	}
	if st.SectorSize != 512 && st.SectorSize != 4096 {
		return nil, unsupported("%d-byte sectors", st.SectorSize)
	}
	mode, vk, err := newMode(Method(n), st.Key, st.SectorSize)
	clear(vk)
	return mode, err
}
