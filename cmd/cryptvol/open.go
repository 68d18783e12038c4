package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
)

// openVolume opens path from its kept unlock (cryptvol unlock) when there
// is one and no credentials were given, else resolves the credentials from
// the flags (asking again, on a terminal, when the password was wrong) and
// unlocks path.
func openVolume(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, path string, readOnly bool) (*volume.Volume, error) {
	if v, err := openUnlocked(ctx, a, fs, cf, path, readOnly); v != nil || err != nil {
		return v, err
	}
	v, err := withTries(a, cf, func() (*volume.Volume, error) {
		c, o, err := cf.resolve(a, fs, readOnly)
		if err != nil {
			return nil, err
		}
		defer c.Wipe()
		defer a.progressLine(&o)()
		o.WrapDevice = testWrapDevice
		return volume.OpenWith(ctx, path, c, o)
	})
	return v, keyFileHint(cf, path, err)
}

// keyFileHint adds to a LUKS volume's wrong-password error, when the
// password came from --password-file FILE and FILE ends in a newline, that
// `cryptsetup luksFormat --key-file FILE` makes the whole file the
// passphrase, newline included, while --password-file takes the first line
// without it.
func keyFileHint(cf *credFlags, path string, err error) error {
	if !errors.Is(err, volume.ErrWrongPassword) || cf.passwordFile == "" || cf.passwordFile == "-" {
		return err
	}
	if cf.header == "" {
		dev, derr := volume.OpenDevice(path, true)
		if derr != nil {
			return err
		}
		isLUKS := luks.Present(dev)
		dev.Close()
		if !isLUKS {
			return err
		}
	}
	f, ferr := os.Open(cf.passwordFile)
	if ferr != nil {
		return err
	}
	defer f.Close()
	last := make([]byte, 1)
	if st, serr := f.Stat(); serr != nil || st.Size() == 0 {
		return err
	} else if _, rerr := f.ReadAt(last, st.Size()-1); rerr != nil || last[0] != '\n' {
		return err
	}
	return fmt.Errorf("%w\n(made with cryptsetup's --key-file %s? Then the whole file, its newline too, is the passphrase: open with --key-file %s)", err, cf.passwordFile, cf.passwordFile)
}

// probeFilesystem fills in what lives in the data area, if recognisable.
func probeFilesystem(v *volume.Volume) *volume.Filesystem {
	r, err := fsprobe.Probe(v)
	if err != nil {
		return nil
	}
	fs := &volume.Filesystem{Type: r.Type, Version: r.Version, Label: r.Label, Serial: r.Serial, UUID: r.UUID}
	if fs.Label == "" {
		// NTFS keeps its label in a file ($Volume), not in the first sectors.
		if fsys, err := filesystem.OpenAs(r.Type, v, v.Size(), filesystem.Options{}); err == nil {
			fs.Label = fsys.Label()
			fsys.Close()
		}
	}
	return fs
}

// testWrapDevice is nil but in tests, which record through it the writes
// and flushes a command sends to the container (crash_test.go).
var testWrapDevice func(volume.Device) volume.Device
