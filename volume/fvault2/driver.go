// Package fvault2 is the FileVault 2 volume driver for CoreStorage
// volumes (Mac OS X 10.7 to 10.12 and HFS+ disks converted later; not
// APFS), cryptsetup's FVAULT2: the CoreStorage metadata is decrypted with
// the key in its header, the user's passphrase unwraps the key-encryption
// key (PBKDF2-SHA256, AES key wrap), that unwraps the volume key, and the
// logical volume is AES-XTS-128 with 512-byte sectors numbered from its
// start, as cryptsetup maps it.
package fvault2

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/cryptvol/cryptvol/ciphers/aes"
	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/sector"
	"github.com/cryptvol/cryptvol/volume"
)

func init() { volume.Register(driver{}) }

type driver struct{}

func (driver) Name() string { return "fvault2" }

// HasMagic: a CoreStorage volume always starts with its header.
func (driver) HasMagic() bool { return true }

func (driver) Handles(t string) bool {
	switch t {
	case "", "fvault2", "filevault2", "corestorage":
		return true
	}
	return false
}

// Detect recognises the CoreStorage physical volume header.
func (driver) Detect(head []byte) bool { return IsCoreStorage(head) }

func (driver) Unlock(ctx context.Context, r *volume.Request) (*volume.Unlocked, error) {
	if r.Header != nil && r.Header != r.Dev {
		return nil, unsupported("CoreStorage keeps its metadata on the volume: a detached header does not apply")
	}
	m, err := ReadMetadata(r.Dev)
	if err != nil {
		return nil, err
	}
	if len(r.Creds.Password) == 0 {
		return nil, fmt.Errorf("%w: FileVault 2 needs the passphrase of one of the Mac's users", volume.ErrWrongPassword)
	}
	vk, err := m.VolumeKey(ctx, r.Creds.Password)
	if err != nil {
		return nil, err
	}
	mode, err := xtsMode(vk)
	if err != nil {
		return nil, err
	}
	if m.LVOffset+m.LVSize > r.Dev.Size() && r.Opts.Warn != nil {
		r.Opts.Warn(fmt.Sprintf("the logical volume ends %d bytes beyond the end of the file", m.LVOffset+m.LVSize-r.Dev.Size()))
	}
	return &volume.Unlocked{
		Mode:       mode,
		DataOffset: m.LVOffset,
		DataSize:   m.LVSize,
		Info:       m.info(),
		MasterKey:  vk,
		ReadOnly:   true,
		State:      &volume.ModeState{Spec: "aes-xts-plain64", SectorSize: 512, Key: bytes.Clone(vk)},
	}, nil
}

// xtsMode is the logical volume's AES-XTS-128 with key and tweak key in
// vk's two halves, on 512-byte sectors.
func xtsMode(vk []byte) (sector.Mode, error) {
	if len(vk) != 32 {
		return nil, fmt.Errorf("%w: a FileVault 2 volume key has 32 bytes, not %d", volume.ErrDamaged, len(vk))
	}
	k1, err := aes.New(vk[:16])
	if err != nil {
		return nil, err
	}
	k2, err := aes.New(vk[16:])
	if err != nil {
		return nil, err
	}
	return sector.NewXTS(k1, k2, 512)
}

// ReopenMode rebuilds the data area's mode from the State of an unlocked
// volume (volume.Reopener).
func (driver) ReopenMode(st volume.ModeState) (sector.Mode, error) {
	if st.Spec != "aes-xts-plain64" || st.SectorSize != 512 {
		return nil, fmt.Errorf("%w: FileVault 2 mode %q with %d-byte sectors", volume.ErrUnsupported, st.Spec, st.SectorSize)
	}
	return xtsMode(st.Key)
}

// VolumeKey derives the AES-XTS volume key from a passphrase: PBKDF2-
// SHA256 gives the key that unwraps the key-encryption key, which unwraps
// the 128-bit volume key; the tweak key is SHA-256(volume key | family
// UUID) cut to 128 bits. Every user's wrapped KEK is tried.
func (m *Metadata) VolumeKey(ctx context.Context, passphrase []byte) ([]byte, error) {
	h, err := hashes.Lookup("sha256")
	if err != nil {
		return nil, err
	}
	for _, p := range m.passphrases {
		pk, err := kdf.PBKDF2Context(ctx, h, passphrase, p.salt[:], p.iterations, keySize)
		if err != nil {
			return nil, err
		}
		kek, err := unwrapKey(pk, p.wrapped[:])
		clear(pk)
		if err != nil {
			continue
		}
		for _, w := range m.wrappedVKs {
			k, err := unwrapKey(kek, w[:])
			if err != nil {
				continue
			}
			clear(kek)
			h := sha256.New()
			h.Write(k)
			h.Write(m.FamilyUUID[:])
			vk := append(k, h.Sum(nil)[:16]...)
			return vk, nil
		}
		clear(kek)
		return nil, damaged("the passphrase unwrapped a key-encryption key, but no volume key unwraps with it")
	}
	return nil, fmt.Errorf("%w: FileVault 2: the passphrase unwraps none of the %d user keys", volume.ErrWrongPassword, len(m.passphrases))
}

func (m *Metadata) info() volume.Info {
	return volume.Info{
		Format:     "fvault2",
		Version:    1,
		Encryption: "aes-xts-plain64",
		Mode:       "xts-plain64",
		Hash:       "pbkdf2-sha256",
		Iterations: m.Iterations,
		KeySize:    256,
		SectorSize: 512,
		DataOffset: m.LVOffset,
		DataSize:   m.LVSize,
		UUID:       uuidString(m.FamilyUUID),
		Details: []volume.Detail{
			{Key: "Physical volume UUID", Value: uuidString(m.PhysicalVolumeUUID)},
			{Key: "Family UUID", Value: uuidString(m.FamilyUUID)},
			{Key: "Logical volume offset", Value: fmt.Sprintf("%d bytes", m.LVOffset)},
			{Key: "Logical volume size", Value: fmt.Sprintf("%d bytes", m.LVSize)},
			{Key: "PBKDF2 salt", Value: fmt.Sprintf("%x", m.Salt)},
			{Key: "User keys", Value: fmt.Sprint(len(m.passphrases))},
		},
	}
}
