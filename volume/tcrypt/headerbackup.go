package tcrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/cryptvol/cryptvol/volume"
)

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

// HeaderRestore writes a backup made by HeaderBackup (or VeraCrypt) over
// both header groups of the volume. It refuses a backup that the
// credentials do not open, whose data area does not fit this container, or
// whose master key differs from the key of the volume's current header
// when that header still opens.
func HeaderRestore(ctx context.Context, dev volume.Device, creds volume.Credentials, o volume.Options, backup []byte) error {
	if len(backup) != BackupSize {
		return fmt.Errorf("%w: a header backup is %d bytes, this file has %d", volume.ErrDamaged, BackupSize, len(backup))
	}
	if o.System {
		return fmt.Errorf("%w: restore system-encryption headers with VeraCrypt's rescue disk", volume.ErrUnsupported)
	}
	bo := o
	// The backup's hidden header opens with the hidden password alone,
	// as the volume's own does.
	locs := []location{{Offset: offHidden, Hidden: true}}
	if !o.Hidden {
		locs = append([]location{{Offset: offNormal}}, locs...)
	}
	f, err := unlockHeader(ctx, &memDevice{backup}, creds, bo, locs)
	if err != nil {
		if errors.Is(err, volume.ErrWrongPassword) {
			return fmt.Errorf("%w: the backup does not open with these credentials", volume.ErrWrongPassword)
		}
		return err
	}
	size := dev.Size()
	end := int64(f.hdr.EncStart + f.hdr.EncSize)
	if int64(f.hdr.EncStart) < headerGroupSize || end > size-headerGroupSize {
		return fmt.Errorf("%w: the backup describes a data area (%d..%d) that does not fit this %d-byte container: it belongs to another volume", volume.ErrExists, f.hdr.EncStart, end, size)
	}
	if cur, err := unlockHeader(ctx, dev, creds, o, headerLocations(size, o)); err == nil {
		if !bytes.Equal(cur.hdr.Keys[:], f.hdr.Keys[:]) {
			return fmt.Errorf("%w: the backup's master key differs from this volume's: it belongs to another volume", volume.ErrExists)
		}
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
