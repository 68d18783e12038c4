package tcrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cryptvol/cryptvol/volume"
)

// testHookBeforeHeaderWrite runs just before a header rewrite checks that
// the headers on disk are still the ones read; tests change them there.
var testHookBeforeHeaderWrite = func() {}

// BackupSize is the size of a header backup file: the normal header's 64
// KiB area followed by the hidden header's, as VeraCrypt's own external
// backups are laid out, so either program can restore from it.
const BackupSize = headerGroupSize

// memDevice serves a header backup (or any byte slice) as a Device.
type memDevice struct{ b []byte }

func (m *memDevice) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m.b)) {
		return 0, fmt.Errorf("read beyond the backup")
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, fmt.Errorf("read beyond the backup")
	}
	return n, nil
}
func (m *memDevice) WriteAt(p []byte, off int64) (int, error) {
	return 0, errors.New("read-only")
}
func (m *memDevice) Size() int64 { return int64(len(m.b)) }
func (m *memDevice) Sync() error { return nil }

// HeaderBackup returns a backup of the volume's header group. The
// credentials must open the volume first (its normal header, or with
// o.Hidden its hidden one), so a backup is never taken of a header that
// does not work; the copy that opened (primary or, if the primary is
// damaged, the embedded backup) is the one saved. The hidden header area is
// copied as it is, without needing its password.
func HeaderBackup(ctx context.Context, dev volume.Device, creds volume.Credentials, o volume.Options) ([]byte, error) {
	if o.System {
		return nil, fmt.Errorf("%w: back up system-encryption headers with VeraCrypt's rescue disk", volume.ErrUnsupported)
	}
	f, err := unlockHeader(ctx, dev, creds, o, headerLocations(dev.Size(), o))
	if err != nil {
		return nil, err
	}
	if f.hdr.reencrypting() {
		// Its header area holds the re-encryption's journal: a backup
		// restored later would rewind it.
		return nil, volume.ErrReencrypting
	}
	if f.hdr.Version < 4 {
		return nil, fmt.Errorf("%w: legacy TrueCrypt volumes have no header group to back up", volume.ErrUnsupported)
	}
	base := int64(0)
	if f.loc.Backup {
		base = dev.Size() - headerGroupSize
	}
	out := make([]byte, BackupSize)
	if _, err := dev.ReadAt(out, base); err != nil {
		return nil, err
	}
	return out, nil
}

// RestoreOptions say which header HeaderRestore restores and how it may
// prove that the backup belongs to the volume.
type RestoreOptions struct {
	// Open selects the header (Hidden: the hidden volume's) and carries
	// the Hash/Encryption hints for the key derivations.
	Open volume.Options
	// Recognise reports whether data, the volume's data area as the
	// backup's key and cipher decrypt it, holds what this volume is known
	// to hold: a filesystem that fsprobe.Probe recognises, say. nil
	// recognises nothing, leaving only the comparison with the current
	// header's key.
	Recognise func(data io.ReaderAt, size int64) bool
	// Force restores a backup that could not be shown to belong to the
	// volume. A backup whose data area does not fit the container is
	// refused all the same.
	Force bool
}

// HeaderRestore writes a backup made by HeaderBackup (or VeraCrypt) over
// both header groups of the volume on dev. The credentials must open the
// backup, its data area must fit the container, and it must be shown to
// belong to this volume: its key decrypts the volume's data area to what
// o.Recognise recognises, or it equals the key of the volume's current
// header (when that opens with the credentials). Otherwise the error wraps
// volume.ErrForeignBackup and nothing is written, unless o.Force.
func HeaderRestore(ctx context.Context, dev volume.Device, creds volume.Credentials, backup []byte, o RestoreOptions) error {
	if len(backup) != BackupSize {
		return fmt.Errorf("%w: a header backup is %d bytes, this file has %d", volume.ErrDamaged, BackupSize, len(backup))
	}
	if o.Open.System {
		return fmt.Errorf("%w: restore system-encryption headers with VeraCrypt's rescue disk", volume.ErrUnsupported)
	}
	size := dev.Size()
	before, err := volume.SnapshotHeader(dev, headerCopies(size)...)
	if err != nil {
		return fmt.Errorf("reading the volume headers: %w", err)
	}
	// The backup's hidden header opens with the hidden password alone,
	// as the volume's own does.
	locs := []location{{Offset: offHidden, Hidden: true}}
	if !o.Open.Hidden {
		locs = append([]location{{Offset: offNormal}}, locs...)
	}
	f, err := unlockHeader(ctx, &memDevice{backup}, creds, o.Open, locs)
	if err != nil {
		if errors.Is(err, volume.ErrWrongPassword) {
			return fmt.Errorf("%w: the backup does not open with these credentials", volume.ErrWrongPassword)
		}
		return err
	}
	defer clear(f.hdr.Keys[:])
	end := int64(f.hdr.EncStart + f.hdr.EncSize)
	if int64(f.hdr.EncStart) < headerGroupSize || end > size-headerGroupSize {
		return fmt.Errorf("%w: it describes a data area (%d..%d) that does not fit this %d-byte container", volume.ErrForeignBackup, f.hdr.EncStart, end, size)
	}
	if f.hdr.reencrypting() {
		return fmt.Errorf("%w: the backup was taken during a re-encryption", volume.ErrUnsupported)
	}
	// A volume in the middle of a re-encryption is safe without a check
	// of its own: its data area's start is under the new key, which no
	// earlier backup holds, and its transition header's key is not the
	// backup's (proveBackup).
	if err := proveBackup(ctx, dev, creds, o, f); err != nil && !o.Force {
		return err
	}
	// The key derivations took seconds: a header rewritten meanwhile by a
	// program the lock cannot see must not be overwritten blindly.
	testHookBeforeHeaderWrite()
	if err := before.Check(dev); err != nil {
		return err
	}
	for _, off := range []int64{0, size - headerGroupSize} {
		if _, err := dev.WriteAt(backup, off); err != nil {
			return err
		}
		if err := dev.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// proveBackup shows that the backup header f belongs to the volume on dev:
// its key decrypts the data area to something recognised (the strongest
// proof, and cheap), or else the volume's current header opens with the
// credentials and holds the same key.
func proveBackup(ctx context.Context, dev volume.Device, creds volume.Credentials, o RestoreOptions, f *found) error {
	if o.Recognise != nil && recognised(dev, f, o.Recognise) {
		return nil
	}
	cur, err := unlockHeader(ctx, dev, creds, o.Open, headerLocations(dev.Size(), o.Open))
	switch {
	case err == nil:
		defer clear(cur.hdr.Keys[:])
		if bytes.Equal(cur.hdr.Keys[:], f.hdr.Keys[:]) {
			return nil
		}
		return fmt.Errorf("%w: its master key differs from the key of the volume's current header, so it belongs to another volume", volume.ErrForeignBackup)
	case ctx.Err() != nil:
		return ctx.Err()
	case !errors.Is(err, volume.ErrWrongPassword):
		return err
	}
	what := "its key does not decrypt the volume's data area to a filesystem"
	if o.Recognise == nil {
		what = "its key could not be tried on the volume's data"
	}
	return fmt.Errorf("%w: %s, and the volume's current header does not open with these credentials to compare keys with (it may be damaged, or the backup may be another volume's)", volume.ErrForeignBackup, what)
}

// recognised decrypts the volume's data area with the backup's key and
// cipher and asks recognise about it.
func recognised(dev volume.Device, f *found, recognise func(io.ReaderAt, int64) bool) bool {
	u, err := unlocked(f, dev)
	if err != nil {
		return false
	}
	v, err := volume.New(dev, u, volume.Options{ReadOnly: true})
	if err != nil {
		clear(u.MasterKey)
		return false
	}
	defer v.Close()
	return recognise(v, v.Size())
}
