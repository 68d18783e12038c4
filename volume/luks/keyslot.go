package luks

import (
	"context"
	"crypto/subtle"
	"fmt"

	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/volume"
)

// A keyslot holds the volume key encrypted under a key derived from the
// passphrase: derive, read the key material, decrypt it (512-byte sectors
// from IV 0, with the keyslot's cipher), merge the anti-forensic stripes,
// and check the result against the volume key digest.

// decryptMaterial reads n bytes of key material at off and decrypts them in
// place with key under spec.
func decryptMaterial(dev volume.Device, off, n int64, spec CipherSpec, key []byte) ([]byte, error) {
	material, err := readAt(dev, off, n)
	if err != nil {
		return nil, err
	}
	m, err := spec.NewMode(key, 512)
	if err != nil {
		clear(material)
		return nil, fmt.Errorf("%w: keyslot cipher: %v", volume.ErrUnsupported, err)
	}
	m.Decrypt(material, material, 0)
	return material, nil
}

// openLUKS1Slot tries the passphrase on LUKS1 keyslot i. It returns the
// volume key, or nil without error when the passphrase is wrong.
func openLUKS1Slot(ctx context.Context, dev volume.Device, h *luks1Header, i int, pass []byte) ([]byte, error) {
	s := &h.Slots[i]
	hs, err := lookupHash(h.HashSpec)
	if err != nil {
		return nil, err
	}
	kb := int(h.KeyBytes)
	if s.Iterations == 0 {
		return nil, fmt.Errorf("%w: keyslot %d has 0 iterations", volume.ErrDamaged, i)
	}
	dk, err := kdf.PBKDF2Context(ctx, hs, pass, s.Salt[:], int(s.Iterations), kb)
	if err != nil {
		return nil, err
	}
	defer clear(dk)
	off, n := h.slotMaterial(i)
	material, err := decryptMaterial(dev, off, n, h.spec, dk)
	if err != nil {
		return nil, err
	}
	defer clear(material)
	mk := make([]byte, kb)
	if err := afMerge(mk, material, int(s.Stripes), hs); err != nil {
		return nil, err
	}
	ok, err := verifyLUKS1Digest(ctx, h, mk)
	if err != nil || !ok {
		clear(mk)
		return nil, err
	}
	return mk, nil
}

// verifyLUKS1Digest checks mk against the header's 20-byte PBKDF2 digest.
func verifyLUKS1Digest(ctx context.Context, h *luks1Header, mk []byte) (bool, error) {
	hs, err := lookupHash(h.HashSpec)
	if err != nil {
		return false, err
	}
	d, err := kdf.PBKDF2Context(ctx, hs, mk, h.MKDigestSalt[:], int(h.MKDigestIter), luks1DigestSize)
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(d, h.MKDigest[:]) == 1, nil
}

// kdfParams turns a LUKS2 keyslot's kdf object into derivation parameters.
func kdfParams(k *jsonKDF) (kdf.Params, error) {
	switch k.Type {
	case "pbkdf2":
		if _, err := lookupHash(k.Hash); err != nil {
			return kdf.Params{}, fmt.Errorf("%w: PBKDF2 hash %q", volume.ErrUnsupported, k.Hash)
		}
		return kdf.Params{Kind: kdf.KindPBKDF2, PRF: k.Hash, Iterations: uint32(k.Iterations)}, nil
	case "argon2i", "argon2id":
		kind := kdf.KindArgon2id
		if k.Type == "argon2i" {
			kind = kdf.KindArgon2i
		}
		if k.Memory > 4<<20 || k.CPUs > 1<<24-1 {
			return kdf.Params{}, fmt.Errorf("%w: %s cost beyond cryptsetup's limits (%d KiB, %d threads)", volume.ErrDamaged, k.Type, k.Memory, k.CPUs)
		}
		return kdf.Params{Kind: kind, Iterations: uint32(k.Time), MemoryKiB: uint32(k.Memory), Parallelism: uint32(k.CPUs)}, nil
	}
	return kdf.Params{}, fmt.Errorf("%w: keyslot KDF %q", volume.ErrUnsupported, k.Type)
}

// openLUKS2Slot tries the passphrase on LUKS2 keyslot id and checks the
// key against the keyslot's digest. It returns nil without error when the
// passphrase is wrong.
func openLUKS2Slot(ctx context.Context, dev volume.Device, h *luks2Header, id string, pass []byte) ([]byte, error) {
	k := h.meta.doc.Keyslots[id]
	if k.Type != "luks2" {
		return nil, fmt.Errorf("%w: keyslot %s has type %q", volume.ErrUnsupported, id, k.Type)
	}
	p, err := kdfParams(k.KDF)
	if err != nil {
		return nil, err
	}
	spec, err := ParseCipherSpec(k.Area.Encryption)
	if err == nil {
		err = spec.Check(int(k.Area.KeySize))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: keyslot %s: %v", volume.ErrUnsupported, id, err)
	}
	afHash, err := lookupHash(k.AF.Hash)
	if err != nil {
		return nil, fmt.Errorf("%w: keyslot %s: anti-forensic %v", volume.ErrUnsupported, id, err)
	}
	dg, ok := h.meta.digestOf(id)
	if !ok {
		return nil, fmt.Errorf("%w: keyslot %s has no digest", volume.ErrDamaged, id)
	}
	salt, _ := decodeB64(k.KDF.Salt)
	dk, err := kdf.Derive(ctx, p, pass, salt, int(k.Area.KeySize))
	if err != nil {
		return nil, err
	}
	defer clear(dk)
	area, _ := h.meta.areas()
	kb := int(*k.KeySize)
	n := afSectors(kb, int(k.AF.Stripes)) * 512
	material, err := decryptMaterial(dev, int64(area[id].off), n, spec, dk)
	if err != nil {
		return nil, err
	}
	defer clear(material)
	mk := make([]byte, kb)
	if err := afMerge(mk, material, int(k.AF.Stripes), afHash); err != nil {
		return nil, err
	}
	ok, err = verifyLUKS2Digest(ctx, &h.meta.doc, dg, mk)
	if err != nil || !ok {
		clear(mk)
		return nil, err
	}
	return mk, nil
}

// verifyLUKS2Digest checks key against digest id (type pbkdf2: the PBKDF2
// of the key with the digest's salt equals the stored digest).
func verifyLUKS2Digest(ctx context.Context, d *jsonDoc, id string, key []byte) (bool, error) {
	dg := d.Digests[id]
	if dg.Type != "pbkdf2" {
		return false, fmt.Errorf("%w: digest %s of type %q", volume.ErrUnsupported, id, dg.Type)
	}
	hs, err := lookupHash(dg.Hash)
	if err != nil {
		return false, fmt.Errorf("%w: digest %s: %v", volume.ErrUnsupported, id, err)
	}
	salt, ok1 := decodeB64(dg.Salt)
	want, ok2 := decodeB64(dg.Digest)
	if !ok1 || !ok2 || len(want) == 0 || len(want) > 1024 || dg.Iterations < 1 || dg.Iterations > 1<<32-1 {
		return false, fmt.Errorf("%w: digest %s is malformed", volume.ErrDamaged, id)
	}
	got, err := kdf.PBKDF2Context(ctx, hs, key, salt, int(dg.Iterations), len(want))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
