package luks

import (
	"errors"
	"fmt"
	"io"

	"github.com/cryptvol/cryptvol/volume"
)

// memDevice is a Device over a byte slice (header backups, fuzzing).
type memDevice struct{ b []byte }

func (m *memDevice) Size() int64 { return int64(len(m.b)) }
func (m *memDevice) Sync() error { return nil }

func (m *memDevice) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memDevice) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(m.b)) {
		return 0, errors.New("write beyond the end of a memory device")
	}
	return copy(m.b[off:], p), nil
}

// backupSize is how many bytes a header backup holds: the LUKS1 header and
// keyslots rounded up to 4096 bytes (as cryptsetup pads it to a page), or
// both LUKS2 header copies and the keyslots area.
func backupSize(l *loaded) int64 {
	if l.v1 != nil {
		return (l.v1.areaEnd() + 4095) &^ 4095
	}
	return l.v2.areaEnd()
}

// HeaderBackup copies the LUKS header and keyslot area of hdr to w
// (cryptsetup luksHeaderBackup) and returns the number of bytes written.
// The backup is itself a valid detached header. Headers with requirement
// flags can be backed up too.
func HeaderBackup(hdr volume.Device, w io.Writer) (int64, error) {
	l, err := load(hdr, "luks")
	if err != nil {
		return 0, err
	}
	n := backupSize(l)
	if n > hdr.Size() {
		// A LUKS1 header whose last 4096-byte page is cut short by the
		// end of the device: copy what exists and pad with zeros.
		if l.v2 != nil || hdr.Size() < l.v1.areaEnd() {
			return 0, fmt.Errorf("%w: the header area runs past the end of the device", volume.ErrDamaged)
		}
	}
	buf := make([]byte, 1<<20)
	var done int64
	for done < n {
		k := min(int64(len(buf)), n-done)
		clear(buf[:k])
		if avail := hdr.Size() - done; avail > 0 {
			part, err := readAt(hdr, done, min(k, avail))
			if err != nil {
				return done, err
			}
			copy(buf, part)
		}
		if l.v1 != nil && done == 0 && l.v1.firstSlotOffset() == luks1AlignKeyslots {
			// As cryptsetup: the unused bytes between the header and the
			// first keyslot are not carried into the backup.
			clear(buf[luks1HeaderSize:min(k, luks1AlignKeyslots)])
		}
		m, err := w.Write(buf[:k])
		done += int64(m)
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// RestoreOptions say what HeaderRestore may do without proof that the
// backup belongs to the device.
type RestoreOptions struct {
	// Force restores a backup whose UUID differs from the device's, or
	// onto a device with no LUKS header left to compare it with.
	Force bool
	// Warn, if set, hears when the restore cannot be written in a
	// crash-safe order (restore_order.go) and goes in one write.
	Warn func(string)
}

// HeaderRestore writes a header backup made by HeaderBackup or cryptsetup
// luksHeaderBackup over the header of hdr (cryptsetup luksHeaderRestore).
// As cryptsetup, it refuses a backup that is not a valid LUKS header or
// has requirement flags, a device whose current LUKS header has a
// different data offset, key size or header size than the backup, and a
// device header with requirement flags. Where cryptsetup asks for
// confirmation, it refuses unless o.Force, with an error wrapping
// volume.ErrForeignBackup: a backup whose UUID is not the one in the
// device's header (read from whichever copy has its magic, even a damaged
// one), and a device with no LUKS header at all.
func HeaderRestore(hdr volume.Device, backup io.ReaderAt, backupLen int64, o RestoreOptions) error {
	if backupLen <= 0 || backupLen > 2*maxHeaderSize+maxKeyslotsSize {
		return fmt.Errorf("%w: %d bytes is not the size of a LUKS header backup", volume.ErrDamaged, backupLen)
	}
	data := make([]byte, backupLen)
	if n, err := backup.ReadAt(data, 0); n < len(data) {
		return fmt.Errorf("reading the backup: %w", err)
	}
	b, err := load(&memDevice{b: data}, "luks")
	if err != nil {
		return fmt.Errorf("the backup does not contain a valid LUKS header: %w", err)
	}
	if b.v2 != nil {
		if b.v2.warning != "" {
			return fmt.Errorf("%w: the backup's two LUKS2 header copies disagree: %s", volume.ErrDamaged, b.v2.warning)
		}
		if len(b.v2.meta.requirements()) > 0 {
			return fmt.Errorf("%w: forbidden LUKS2 requirements in the backup", volume.ErrUnsupported)
		}
	}
	n := backupSize(b)
	if b.v1 != nil {
		n = b.v1.areaEnd() // the padding page may be beyond a small device
	}
	before, err := volume.SnapshotHeader(hdr, volume.Extent{Offset: 0, Length: n})
	if err != nil {
		return fmt.Errorf("reading the device's header: %w", err)
	}
	backupUUID := b.uuid()
	switch devUUID := deviceUUID(hdr); {
	case o.Force:
	case devUUID == "":
		return fmt.Errorf("%w: the device has no LUKS header whose UUID could be compared with the backup's (%s)", volume.ErrForeignBackup, backupUUID)
	case devUUID != backupUUID:
		return fmt.Errorf("%w: its UUID %s is not the volume's, %s", volume.ErrForeignBackup, backupUUID, devUUID)
	}
	cur, err := load(hdr, "luks")
	if err != nil {
		cur = nil // nothing on the device loads: no header to keep whole
	}
	if cur != nil {
		if err := checkWritable(cur); err != nil {
			return err
		}
		switch {
		case (cur.v1 != nil) != (b.v1 != nil):
			return fmt.Errorf("the device holds a LUKS%d header and the backup a LUKS%d one", version(cur), version(b))
		case b.v1 != nil && (cur.v1.PayloadOff != b.v1.PayloadOff || cur.v1.KeyBytes != b.v1.KeyBytes):
			return errors.New("data offset or key size differ on the device and in the backup; restore refused")
		case b.v2 != nil && (dataOffsetOf(cur.v2) != dataOffsetOf(b.v2) || cur.v2.areaEnd() != b.v2.areaEnd()):
			return errors.New("data offset or header size differ on the device and in the backup; restore refused")
		}
	}
	if n > hdr.Size() {
		return fmt.Errorf("the device (%d bytes) is smaller than the %d-byte header backup", hdr.Size(), n)
	}
	if err := before.Check(hdr); err != nil {
		return err
	}
	return writeRestored(hdr, cur, b, data[:n], o.Warn)
}

// uuid is the header's UUID.
func (l *loaded) uuid() string {
	if l.v1 != nil {
		return l.v1.UUID
	}
	return l.v2.bin.UUID
}

func version(l *loaded) int {
	if l.v1 != nil {
		return 1
	}
	return 2
}

func dataOffsetOf(h *luks2Header) string {
	if ids := sortedIDs(h.meta.doc.Segments); len(ids) > 0 {
		return h.meta.doc.Segments[ids[0]].Offset
	}
	return ""
}
