package tcrypt

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cryptvol/cryptvol/volume"
)

// ConvertOptions say which TrueCrypt header ConvertToVeraCrypt re-encrypts
// and with what.
type ConvertOptions struct {
	// Open selects the header: Options.Hidden for the hidden volume's
	// (which opens only with its own password), Hash and Encryption hints
	// to find it faster. The type is always TrueCrypt.
	Open volume.Options
	// Hash is the VeraCrypt PRF of the new header; "" means SHA-512, the
	// VeraCrypt default.
	Hash string
	// PIM is the new header's PIM; 0 is VeraCrypt's default (500,000
	// PBKDF2 iterations).
	PIM int
	// Random, if set, is extra entropy mixed into the new salts.
	Random io.Reader
}

// Converted describes the VeraCrypt header a conversion wrote.
type Converted struct {
	Hidden     bool
	Encryption string
	Hash       string
	Iterations int
	// RepairedPrimary is set when the primary header copy did not open
	// (the embedded backup did) and was rewritten from it.
	RepairedPrimary bool
}

// ErrNotTrueCrypt is returned when no TrueCrypt header opened with the
// credentials; a VeraCrypt volume needs no conversion. It wraps
// volume.ErrWrongPassword (a TrueCrypt header cannot be told from random
// bytes without its password).
var ErrNotTrueCrypt = fmt.Errorf("%w: no TrueCrypt header opened with these credentials (a VeraCrypt volume needs no conversion)", volume.ErrWrongPassword)

// NotOpenableByVeraCrypt explains why current VeraCrypt (1.26 and later)
// cannot open a volume whose header uses the PRF prf, or returns "".
func NotOpenableByVeraCrypt(prf string) string {
	if canonicalPRF(prf) == "RIPEMD-160" {
		return "VeraCrypt 1.26 and later cannot open volumes whose header uses RIPEMD-160 (it was removed in 1.26)"
	}
	return ""
}

// ConvertToVeraCrypt re-encrypts a TrueCrypt volume's header (the normal
// one, or with o.Open.Hidden the hidden volume's; both its copies) as a
// VeraCrypt header: magic "VERA", a VeraCrypt PRF and iteration count, a
// fresh salt for each copy. The master key, the cipher and the data stay
// as they are, so the volume's files are untouched; VeraCrypt 1.26, which
// dropped TrueCrypt volumes, opens the result. TrueCrypt itself no longer
// does.
//
// Each header is converted only with its own password: a hidden volume's
// header cannot be found, let alone converted, with the outer volume's
// credentials, so converting an outer volume leaves any hidden volume in it
// a TrueCrypt one until it is converted with its own password.
//
// As with ChangeCredentials, the primary copy is written and synced before
// the backup; both copies hold the same master key, so a crash between
// them leaves a volume that opens as TrueCrypt (the backup) or VeraCrypt
// (the primary), with its data intact either way.
func ConvertToVeraCrypt(ctx context.Context, dev volume.Device, creds volume.Credentials, o ConvertOptions) (*Converted, error) {
	opts := o.Open
	if opts.System {
		return nil, fmt.Errorf("%w: converting system encryption is left to VeraCrypt's own tools (decrypt with TrueCrypt, encrypt with VeraCrypt)", volume.ErrUnsupported)
	}
	if creds.PIM != 0 {
		return nil, volume.InvalidOption(errors.New("TrueCrypt volumes have no PIM: give the new PIM in the conversion options"))
	}
	if o.PIM < 0 {
		return nil, errors.New("PIM must not be negative")
	}
	if why := NotOpenableByVeraCrypt(o.Hash); why != "" {
		return nil, fmt.Errorf("--hash %s: %s; choose SHA-512 (the default), SHA-256, Whirlpool, BLAKE2s-256 or Streebog", o.Hash, why)
	}
	opts.Type = "truecrypt"
	size := dev.Size()
	before, err := volume.SnapshotHeader(dev, headerCopies(size)...)
	if err != nil {
		return nil, fmt.Errorf("reading the volume headers: %w", err)
	}
	f, err := unlockHeader(ctx, dev, creds, opts, headerLocations(size, opts))
	if err != nil {
		if errors.Is(err, volume.ErrWrongPassword) && !errors.Is(err, ErrNotTrueCrypt) {
			return nil, ErrNotTrueCrypt
		}
		return nil, err
	}
	defer clear(f.hdr.Keys[:])
	if f.hdr.reencrypting() {
		return nil, volume.ErrReencrypting
	}
	if f.scheme.Mode != "xts" || f.hdr.Version < 4 {
		return nil, fmt.Errorf("%w: this TrueCrypt %s volume (header version %d, %s mode) has no backup header area and cannot be opened by any VeraCrypt; only volumes of TrueCrypt 6.0 and later convert",
			volume.ErrUnsupported, programVersion(f.hdr.MinVersion), f.hdr.Version, f.scheme.Mode)
	}
	hash := o.Hash
	if hash == "" {
		hash = "SHA-512"
	}
	co := CreateOptions{Hash: hash, Encryption: f.scheme.Name()}
	_, k, err := resolveCreate(&co, o.PIM)
	if err != nil {
		return nil, err
	}
	ent, err := newEntropy(o.Random)
	if err != nil {
		return nil, err
	}
	pass, err := passwordInput(creds.Password, creds.Keyfiles, true)
	if err != nil {
		return nil, err
	}
	defer clear(pass)
	h := *f.hdr
	h.Magic, h.Version, h.MinVersion = "VERA", headerVersion, veraCryptMinVer
	defer clear(h.Keys[:])
	primary, backup := int64(offNormal), size+offBackupNormal
	if f.loc.Hidden {
		primary, backup = offHidden, size+offBackupHidden
	}
	var sealed [2][]byte
	for i := range sealed {
		if sealed[i], err = sealHeader(ctx, &h, f.scheme, k, pass, ent); err != nil {
			return nil, err
		}
	}
	testHookBeforeHeaderWrite()
	if err := before.Check(dev); err != nil {
		return nil, err
	}
	for i, off := range []int64{primary, backup} {
		if _, err := dev.WriteAt(sealed[i], off); err != nil {
			return nil, err
		}
		if err := dev.Sync(); err != nil {
			return nil, err
		}
	}
	return &Converted{Hidden: f.loc.Hidden, Encryption: f.scheme.Name(), Hash: k.PRF, Iterations: k.Iterations, RepairedPrimary: f.loc.Backup}, nil
}
