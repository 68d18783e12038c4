package reencrypt

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// EncryptOptions describe turning a plain image into a volume.
type EncryptOptions struct {
	// Type is "veracrypt" (the default), "truecrypt" or "luks2".
	Type string
	// Encryption and Hash are the VeraCrypt/TrueCrypt cipher chain and
	// PRF (defaults AES and SHA-512); the PIM comes with the credentials.
	Encryption, Hash string
	// Cipher, KeySize, SectorSize and KDF are the LUKS2 volume's
	// (cryptsetup's defaults when zero).
	Cipher     string
	KeySize    int
	SectorSize int
	KDF        luks.KDFOptions
	// Header, for LUKS2, is a detached header device (a new, empty
	// file): the image keeps its size and layout and is encrypted where
	// it is. Without it the data moves up by DataOffset (default 16 MiB)
	// to make room for the header at the start, which needs twice that
	// free at the end of the image (cryptsetup's --reduce-device-size).
	Header     volume.Device
	DataOffset int64
	// Resilience protects a LUKS2 encryption in place (detached header):
	// checksum (default) or journal.
	Resilience volume.Resilience
	// Force encrypts an image whose filesystem cannot be checked for
	// room at its end (none recognised, or one cryptvol cannot measure).
	Force bool
	// Random is extra entropy (VeraCrypt) or the randomness source (LUKS).
	Random io.Reader
	// Shrink, when set, is asked to shrink the filesystem of type fsType
	// (as fsprobe names it: "vfat", ...) at the start of dev so that it
	// ends within its first keep bytes, giving up only free space; it
	// returns the size the filesystem has then, an error marked with
	// CannotShrink when its end is in use, or one wrapping
	// errors.ErrUnsupported for a type it cannot shrink. This package knows no filesystem, so the caller brings it
	// (cmd/cryptvol passes fat.Shrink for FAT). Without it, a filesystem
	// that reaches into the headers' space is refused with ErrNoRoom.
	Shrink func(dev volume.Device, fsType string, keep int64) (int64, error)
	// Warn hears about changes made to make room (a filesystem shrunk).
	Warn func(string)
}

// ErrCannotShrink is what EncryptOptions.Shrink returns (through
// CannotShrink) when the filesystem cannot give up the space the headers
// need.
var ErrCannotShrink = errors.New("the filesystem cannot be shrunk enough")

// CannotShrink marks the filesystem's own reason for not shrinking as
// ErrCannotShrink, keeping its text for the message.
func CannotShrink(reason error) error { return cannotShrink{reason} }

type cannotShrink struct{ error }

func (e cannotShrink) Is(target error) bool { return target == ErrCannotShrink }
func (e cannotShrink) Unwrap() error        { return e.error }

// ErrNoRoom refuses to encrypt an image whose filesystem reaches into the
// space the volume's headers need.
var ErrNoRoom = errors.New("no room for the volume's headers")

// StartEncrypt begins encrypting the plain image on dev in place, as a
// VeraCrypt, TrueCrypt or LUKS2 volume, and returns the re-encryption for
// Run. It first makes sure the space the headers take is free: the
// filesystem in the image must end before it (or be shrunk to fit by
// EncryptOptions.Shrink), else it refuses with ErrNoRoom.
func StartEncrypt(ctx context.Context, dev volume.Device, creds volume.Credentials, o EncryptOptions) (volume.Reencryption, error) {
	switch o.Type {
	case "", "veracrypt", "truecrypt":
		keep := dev.Size() - tcrypt.EncryptRoom
		if err := makeRoom(dev, keep, o); err != nil {
			return nil, err
		}
		r, err := tcrypt.StartEncrypt(ctx, dev, creds, tcrypt.CreateOptions{
			TrueCrypt: o.Type == "truecrypt", Encryption: o.Encryption, Hash: o.Hash, Random: o.Random,
		})
		if err != nil {
			return nil, err
		}
		return r, nil
	case "luks2", "luks":
		lo := luks.EncryptOptions{Cipher: o.Cipher, KeySize: o.KeySize, SectorSize: o.SectorSize, KDF: o.KDF,
			Header: o.Header, DataOffset: o.DataOffset, Resilience: o.Resilience, Rand: o.Random}
		keep := luks.EncryptKeeps(dev.Size(), lo)
		if err := makeRoom(dev, keep, o); err != nil {
			return nil, err
		}
		r, err := luks.StartEncrypt(ctx, dev, creds, lo)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	return nil, volume.InvalidOptionf("unknown volume type %q (want veracrypt, truecrypt or luks2)", o.Type)
}

// makeRoom checks that the filesystem in the image ends within its first
// keep bytes, asking o.Shrink to shrink it when it does not.
func makeRoom(dev volume.Device, keep int64, o EncryptOptions) error {
	size := dev.Size()
	if keep >= size {
		return nil
	}
	need := size - keep
	res, err := fsprobe.Probe(dev)
	if err != nil {
		if o.Force {
			return nil
		}
		return fmt.Errorf("%w: no filesystem is recognised in the image, so whether its last %d bytes are free is unknown; if they are, use --force", ErrNoRoom, need)
	}
	if res.Size == 0 {
		if o.Force {
			return nil
		}
		return fmt.Errorf("%w: the %s filesystem does not say how large it is; if the image's last %d bytes are free, use --force", ErrNoRoom, res.Type, need)
	}
	if res.Size <= keep {
		return nil
	}
	if o.Shrink != nil {
		got, err := o.Shrink(dev, res.Type, keep)
		if !errors.Is(err, errors.ErrUnsupported) {
			return shrunk(dev, res, need, got, err, o)
		}
	}
	return fmt.Errorf("%w: the %s filesystem covers %d bytes, %d more than the encrypted volume will hold: shrink it by that much first, or grow the image (truncate -s +%d IMAGE)", ErrNoRoom, res.Type, res.Size, res.Size-keep, need)
}

// shrunk reports what EncryptOptions.Shrink did to make need bytes free:
// got is the filesystem's size after it, err its failure.
func shrunk(dev volume.Device, res *fsprobe.Result, need, got int64, err error, o EncryptOptions) error {
	name := res.Type
	if name == "vfat" {
		name = "FAT"
	}
	if err == nil {
		if o.Warn != nil {
			o.Warn(fmt.Sprintf("the %s filesystem was shrunk from %d to %d bytes (its last clusters were free) to make room for the headers", name, res.Size, got))
		}
		return dev.Sync()
	}
	if !errors.Is(err, ErrCannotShrink) {
		return err
	}
	return fmt.Errorf("%w: the %s filesystem uses the image's last %d bytes, which the headers need (%v); free them, or grow the image (truncate -s +%d IMAGE)", ErrNoRoom, name, need, err, need)
}
