package tcrypt

import (
	"context"
	"fmt"

	"github.com/cryptvol/cryptvol/volume"
)

// ChangeOptions say which header to re-encrypt and with what.
type ChangeOptions struct {
	// Open selects the header: Options.Hidden for the hidden volume's,
	// Hash/Encryption hints to find it faster.
	Open volume.Options
	// NewHash is the PRF for the new header; "" keeps the current one.
	NewHash string
}

// ChangeCredentials re-encrypts a volume header (normal or hidden, both its
// copies) under new credentials and, optionally, a new PRF, each copy with
// a fresh salt. The master key, and so the data, stay as they are.
//
// The primary copy is written and synced first, then the backup. A crash
// during the first write leaves a torn primary but the old backup, which
// Open falls back to; after it, the new primary opens. Either way the
// volume opens with the old or the new credentials.
func ChangeCredentials(ctx context.Context, dev volume.Device, old, new volume.Credentials, o ChangeOptions) error {
	opts := o.Open
	if opts.System {
		return fmt.Errorf("%w: changing the password of system encryption is left to VeraCrypt's boot loader tools", volume.ErrUnsupported)
	}
	before, err := volume.SnapshotHeader(dev, headerCopies(dev.Size())...)
	if err != nil {
		return fmt.Errorf("reading the volume headers: %w", err)
	}
	f, err := unlockHeader(ctx, dev, old, opts, headerLocations(dev.Size(), opts))
	if err != nil {
		return err
	}
	if f.hdr.reencrypting() {
		return volume.ErrReencrypting
	}
	if f.scheme.Mode != "xts" || f.hdr.Version < 4 {
		return fmt.Errorf("%w: legacy TrueCrypt volumes (header version %d, %s) are read-only", volume.ErrUnsupported, f.hdr.Version, f.scheme.Mode)
	}
	vera := f.hdr.Magic == "VERA"
	k := f.kdf
	if o.NewHash != "" || new.PIM != old.PIM {
		name := o.NewHash
		if name == "" {
			name = k.PRF
		}
		co := CreateOptions{TrueCrypt: !vera, Hash: name, Encryption: f.scheme.Name()}
		if _, k, err = resolveCreate(&co, new.PIM); err != nil {
			return err
		}
	}
	ent, err := newEntropy(nil)
	if err != nil {
		return err
	}
	pass, err := passwordInput(new.Password, new.Keyfiles, vera)
	if err != nil {
		return err
	}
	defer clear(pass)
	size := dev.Size()
	primary, backup := int64(offNormal), size+offBackupNormal
	if f.loc.Hidden {
		primary, backup = offHidden, size+offBackupHidden
	}
	var sealed [2][]byte
	for i := range sealed {
		if sealed[i], err = sealHeader(ctx, f.hdr, f.scheme, k, pass, ent); err != nil {
			return err
		}
	}
	// The key derivations took seconds: a header rewritten meanwhile by a
	// program the lock cannot see must not be overwritten blindly.
	testHookBeforeHeaderWrite()
	if err := before.Check(dev); err != nil {
		return err
	}
	for i, off := range []int64{primary, backup} {
		if _, err := dev.WriteAt(sealed[i], off); err != nil {
			return err
		}
		if err := dev.Sync(); err != nil {
			return err
		}
	}
	return nil
}
