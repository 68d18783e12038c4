package tcrypt

import (
	"context"
	"errors"
	"fmt"

	"github.com/cryptvol/cryptvol/volume"
)

// ErrResizeRefused marks a resize that would destroy data (the hidden
// volume of an outer one being shrunk) or a size the layout cannot take.
var ErrResizeRefused = errors.New("resize refused")

// MinResizeSize is the smallest container Resize makes: the two header
// groups and one 4 KiB block of data.
const MinResizeSize = 2*headerGroupSize + 4096

// ResizeInfo describes a normal volume's layout as its primary header says.
type ResizeInfo struct {
	// ContainerSize is the container size the header describes (data
	// area plus both header groups); the file may be larger while a grow
	// or shrink is under way.
	ContainerSize int64
	// DataSize is the size of the decrypted data area.
	DataSize int64
}

// DataSizeFor is the data area a container of size bytes holds.
func DataSizeFor(size int64) int64 { return size - 2*headerGroupSize }

// ContainerSizeFor is the container a data area of n bytes takes.
func ContainerSizeFor(n int64) int64 { return n + 2*headerGroupSize }

// ResizeLayout reads the primary header of the normal volume on dev and
// returns the layout it describes, refusing those Resize cannot change
// (system encryption, hidden volumes themselves, legacy TrueCrypt, a
// volume in the middle of re-encryption, non-standard data offsets).
func ResizeLayout(ctx context.Context, dev volume.Device, creds volume.Credentials, o volume.Options) (ResizeInfo, error) {
	f, err := resizeHeader(ctx, dev, creds, o)
	if err != nil {
		return ResizeInfo{}, err
	}
	return ResizeInfo{ContainerSize: int64(f.hdr.EncSize) + 2*headerGroupSize, DataSize: int64(f.hdr.EncSize)}, nil
}

func resizeHeader(ctx context.Context, dev volume.Device, creds volume.Credentials, o volume.Options) (*found, error) {
	if o.System {
		return nil, fmt.Errorf("%w: resizing system encryption", volume.ErrUnsupported)
	}
	if o.Hidden {
		return nil, fmt.Errorf("%w: a hidden volume lies inside its outer volume and keeps its size (resize the outer one)", volume.ErrUnsupported)
	}
	// The primary copy only: it is the one every step below rewrites
	// last, so it always says which size the volume has.
	f, err := unlockHeader(ctx, dev, creds, o, []location{{Offset: offNormal}})
	if err != nil {
		return nil, err
	}
	h := f.hdr
	switch {
	case h.reencrypting():
		return nil, volume.ErrReencrypting
	case f.scheme.Mode != "xts" || h.Version < 4:
		return nil, fmt.Errorf("%w: legacy TrueCrypt volumes (header version %d, %s) are read-only", volume.ErrUnsupported, h.Version, f.scheme.Mode)
	case h.EncStart != headerGroupSize || h.VolumeSize != h.EncSize || h.HiddenSize != 0:
		return nil, fmt.Errorf("%w: resizing a volume whose data area starts at byte %d (size %d, encrypted %d)", volume.ErrUnsupported, h.EncStart, h.VolumeSize, h.EncSize)
	}
	return f, nil
}

// Resize rewrites the normal volume's headers on dev for a container of
// newSize bytes. dev must already be at least newSize bytes long (a grow
// extends the file first); a shrink truncates it after Resize returns,
// once the filesystem inside was made to fit (the caller's job: Resize
// moves no data). The data keys stay; each header copy gets a fresh salt.
//
// Order, for crash safety: the new backup header group is written at the
// new end and synced, then the primary header, synced. Until the primary
// is written the volume opens with its old size (the new backup group
// lies past the old end on a grow, in free space of the shrunk
// filesystem on a shrink); after it, with the new size. The 512 bytes
// where a hidden volume keeps its backup header are carried over from the
// old backup group, so a hidden volume (which cryptvol cannot see without
// its password) keeps both its header copies on a grow.
//
// hidden, when not nil, are the credentials of a hidden volume inside: a
// shrink is then refused (the hidden volume lies at the end of the outer
// one's data area), a grow checks they open it.
func Resize(ctx context.Context, dev volume.Device, creds volume.Credentials, o volume.Options, newSize int64) error {
	if newSize < MinResizeSize || newSize%dataUnitSize != 0 {
		return fmt.Errorf("%w: %d bytes: want a multiple of %d of at least %d", ErrResizeRefused, newSize, dataUnitSize, MinResizeSize)
	}
	if dev.Size() < newSize {
		return fmt.Errorf("resize: the device holds %d bytes, fewer than the new size %d", dev.Size(), newSize)
	}
	before, err := volume.SnapshotHeader(dev, volume.Extent{Offset: offNormal, Length: headerSize})
	if err != nil {
		return fmt.Errorf("reading the volume header: %w", err)
	}
	f, err := resizeHeader(ctx, dev, creds, o)
	if err != nil {
		return err
	}
	oldSize := int64(f.hdr.EncSize) + 2*headerGroupSize
	if o.ProtectHidden != nil {
		if newSize < oldSize {
			return fmt.Errorf("%w: shrinking an outer volume would cut off its hidden volume, which lies at the end of the outer one's data area", ErrResizeRefused)
		}
		if _, err := unlockHeader(ctx, dev, *o.ProtectHidden, volume.Options{Hidden: true}, []location{{Offset: offHidden, Hidden: true}}); err != nil {
			return fmt.Errorf("the hidden volume's credentials: %w", err)
		}
	}
	if newSize == oldSize {
		return nil
	}
	h := *f.hdr
	h.VolumeSize = uint64(newSize - 2*headerGroupSize)
	h.EncSize = h.VolumeSize
	vera := h.Magic == "VERA"
	pass, err := passwordInput(creds.Password, creds.Keyfiles, vera)
	if err != nil {
		return err
	}
	defer clear(pass)
	ent, err := newEntropy(nil)
	if err != nil {
		return err
	}
	var sealed [2][]byte
	for i := range sealed {
		if sealed[i], err = sealHeader(ctx, &h, f.scheme, f.kdf, pass, ent); err != nil {
			return err
		}
	}
	group, err := ent.bytes(headerGroupSize)
	if err != nil {
		return err
	}
	copy(group, sealed[1])
	// The hidden volume's backup header slot, as it was (random bytes or
	// a header: nobody can tell, and nothing needs to).
	if oldSize <= dev.Size() {
		if _, err := dev.ReadAt(group[headerGroupSize+offBackupHidden:][:headerSize], oldSize+offBackupHidden); err != nil {
			return err
		}
	}
	testHookBeforeHeaderWrite()
	if err := before.Check(dev); err != nil {
		return err
	}
	if _, err := dev.WriteAt(group, newSize-headerGroupSize); err != nil {
		return err
	}
	if err := dev.Sync(); err != nil {
		return err
	}
	testHookResizeBetween()
	if _, err := dev.WriteAt(sealed[0], offNormal); err != nil {
		return err
	}
	return dev.Sync()
}

// testHookResizeBetween runs between the backup and the primary header
// writes (tests crash there).
var testHookResizeBetween = func() {}
